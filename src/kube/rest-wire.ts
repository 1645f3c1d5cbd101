/**
 * One request's wire form for the kube client (`rest.ts`): the headers and body it sends, and how its answer is
 * read (JSON parsed, protobuf decoded, a non-2xx answer turned into a typed KubeError).
 */
import { kubeErrorFromStatus, parseRetryAfter } from './errors.ts';
import { ProtobufError } from './protobuf/media.ts';

/** What `answer` reads of a response besides its body. */
export interface Head {
  status: number;
  contentType: string | null;
  retryAfter: string | null;
}

/** The answer's object (JSON parsed, protobuf decoded by `decode`), or its KubeError. */
export async function answer<T>(res: Head, body: string | Uint8Array, what: string, decode: ((body: Uint8Array) => unknown) | undefined): Promise<T> {
  const ok = res.status >= 200 && res.status <= 299;
  if (typeof body !== 'string') {
    if (!ok) {
      const { decodeStatus } = await import('./protobuf/envelope.ts');
      throw kubeErrorFromStatus(res.status, decodeStatus(body), what, parseRetryAfter(res.retryAfter));
    }
    if (!decode) throw new ProtobufError(`${what}: a protobuf answer to a request that did not ask for one`);
    return decode(body) as T;
  }
  const parsed: unknown = body.length > 0 && isJson(res.contentType) ? JSON.parse(body) : body;
  if (!ok) throw kubeErrorFromStatus(res.status, parsed, what, parseRetryAfter(res.retryAfter));
  return parsed as T;
}

/** The request headers: credentials, Accept (JSON unless asked otherwise) and the body's content type. */
export function requestHeaders(
  auth: Record<string, string>,
  opts: { accept?: string | undefined; contentType?: string | undefined; body?: unknown },
): Record<string, string> {
  const h: Record<string, string> = { ...auth, accept: opts.accept ?? 'application/json' };
  if (opts.body !== undefined) h['content-type'] = opts.contentType ?? 'application/json';
  return h;
}

export function serialize(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  return typeof body === 'string' ? body : JSON.stringify(body);
}

export function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

function isJson(contentType: string | null): boolean {
  return contentType !== null && contentType.includes('json');
}
