/**
 * One bounded HTTP request to a destination a tenant (or the installer) chose: no redirects (a 3xx answer is an
 * error), a deadline and the caller's AbortSignal, request headers that reach cloud metadata services or steer
 * the connection refused, and an answer read as a stream with a hard byte cap: a declared `Content-Length`
 * over the cap is refused before any of the body is read, and the stream is cut as soon as it passes the cap.
 * Every failure is an `EgressError` with ebb's own message.
 */
import { request, type Dispatcher } from 'undici';
import { EgressError, isEgressError } from './errors.ts';

export interface OutboundRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  body?: string | undefined;
  /** The most bytes of the answer's body read. */
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface OutboundAnswer {
  status: number;
  /** The body as UTF-8 (at most `maxBytes` bytes). */
  text: string;
}

/**
 * Headers a request may not carry: those cloud metadata services require (so that a request that carries none
 * cannot read them even where the address rules are relaxed), and those that steer the connection or framing
 * rather than the request (Host would route an allowed address to another virtual host).
 */
const REFUSED_HEADERS = new Set([
  'metadata-flavor',
  'metadata',
  'x-aws-ec2-metadata-token',
  'x-aws-ec2-metadata-token-ttl-seconds',
  'x-google-metadata-request',
  'x-ecs-agent-token',
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
]);

/** Why the headers may not be sent, or undefined. */
export function headerRefusal(headers: Readonly<Record<string, string>>): string | undefined {
  const refused = Object.keys(headers).find((h) => REFUSED_HEADERS.has(h.toLowerCase()));
  return refused === undefined ? undefined : `header ${refused} may not be sent`;
}

function failure(err: unknown, deadline: AbortSignal, caller: AbortSignal): EgressError {
  if (isEgressError(err)) return err;
  const cause = err instanceof Error ? err.cause : undefined;
  if (isEgressError(cause)) return cause;
  if (caller.aborted) return new EgressError('Aborted', 'cancelled');
  if (deadline.aborted) return new EgressError('Timeout', 'no answer in time');
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  const shown = typeof code === 'string' ? ` (${code})` : '';
  if (typeof code === 'string' && /TIMEOUT/.test(code)) return new EgressError('Timeout', `no answer in time${shown}`);
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return new EgressError('ConnectFailed', `connection failed${shown}`);
  return new EgressError('RequestFailed', `request failed${shown}`);
}

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new EgressError('TooLarge', `the answer is too large (over ${maxBytes} bytes)`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Sends one request through `dispatcher` (whose connector judges addresses); the answer, or an EgressError. */
export async function boundedRequest(dispatcher: Dispatcher, req: OutboundRequest): Promise<OutboundAnswer> {
  if (req.url.protocol !== 'http:' && req.url.protocol !== 'https:')
    throw new EgressError('BadUrl', `${req.url.protocol} URLs are not called (http or https only)`);
  if (req.url.username !== '' || req.url.password !== '') throw new EgressError('BadUrl', 'a URL with credentials is not called (send them in a header)');
  const refused = headerRefusal(req.headers);
  if (refused) throw new EgressError('HeaderRefused', refused);
  const deadline = AbortSignal.timeout(req.timeoutMs);
  const signal = AbortSignal.any([req.signal, deadline]);
  let res: Dispatcher.ResponseData;
  try {
    res = await request(req.url, {
      dispatcher,
      method: req.method,
      headers: { ...req.headers },
      ...(req.body === undefined ? {} : { body: req.body }),
      signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
  } catch (err) {
    throw failure(err, deadline, req.signal);
  }
  // A body given up early errors once destroyed (its reader, if any, sees that error itself).
  res.body.on('error', () => undefined);
  try {
    if (res.statusCode >= 300 && res.statusCode < 400) throw new EgressError('Redirect', `HTTP ${res.statusCode}: redirects are not followed`);
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > req.maxBytes)
      throw new EgressError('TooLarge', `the answer is too large (Content-Length over ${req.maxBytes} bytes)`);
    const body = await readCapped(res.body, req.maxBytes);
    return { status: res.statusCode, text: body.toString('utf8') };
  } catch (err) {
    res.body.destroy();
    throw failure(err, deadline, req.signal);
  }
}
