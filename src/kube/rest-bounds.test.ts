/**
 * KubeRest against a scripted local HTTP server: every request has a deadline, a 429 is retried after the
 * Retry-After the server asked for, and a 401 reads the credentials again (a rotated token) before it fails.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isKubeError } from './errors.ts';
import type { KubeConfig } from './kubeconfig.ts';
import { KubeRest } from './rest.ts';

type Reply = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let url = '';
let replies: Reply[] = [];
let seen: { at: number; authorization: string | undefined; port: number | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ at: Date.now(), authorization: req.headers.authorization, port: req.socket.remotePort });
    const reply = replies.shift();
    if (reply) reply(req, res);
    else json(res, 200, { kind: 'Status', status: 'Success' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  server.closeAllConnections();
  replies = [];
  seen = [];
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A config whose token is whatever `token.value` holds when the client reads its credentials. */
function client(token: { value: string }, requestTimeoutMs?: number): KubeRest {
  const config: KubeConfig = {
    source: 'test',
    server: url,
    tls: {},
    proxyUrl: undefined,
    credentials: () => Promise.resolve({ headers: { authorization: `Bearer ${token.value}` } }),
  };
  return new KubeRest(config, requestTimeoutMs === undefined ? {} : { requestTimeoutMs });
}

const tooMany =
  (retryAfter: string): Reply =>
  (_req, res) =>
    json(res, 429, { kind: 'Status', reason: 'TooManyRequests', message: 'slow down' }, { 'retry-after': retryAfter });

describe('KubeRest bounds every wait', () => {
  it('fails a request that gets no answer within the deadline as an unreachable apiserver', async () => {
    replies = [() => undefined]; // never answers
    const started = Date.now();
    const err: unknown = await client({ value: 't' }, 300)
      .request('GET', '/api/v1/pods')
      .catch((e: unknown) => e);
    expect(isKubeError(err, 'Unavailable')).toBe(true);
    expect((err as Error).message).toContain('no answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("still lets the caller's signal cancel, with the caller's reason", async () => {
    replies = [() => undefined];
    const ac = new AbortController();
    const pending = client({ value: 't' }).request('GET', '/api/v1/pods', { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const err: unknown = await pending.catch((e: unknown) => e);
    expect(isKubeError(err)).toBe(false);
    expect(ac.signal.aborted).toBe(true);
  });

  it("retries a 429 after the server's Retry-After", async () => {
    replies = [tooMany('1')];
    const body = await client({ value: 't' }).request<{ status: string }>('GET', '/api/v1/pods');
    expect(body.status).toBe('Success');
    expect(seen).toHaveLength(2);
    expect((seen[1]?.at ?? 0) - (seen[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('hands a long Retry-After back to the caller on the error, without waiting', async () => {
    replies = [tooMany('120')];
    const err: unknown = await client({ value: 't' })
      .request('GET', '/api/v1/pods')
      .catch((e: unknown) => e);
    expect(isKubeError(err, 'TooManyRequests') && err.retryAfterMs).toBe(120_000);
    expect(seen).toHaveLength(1);
  });

  it('keeps the connection after a DELETE with a body (no new connection, no new TLS handshake)', async () => {
    const rest = client({ value: 't' });
    await rest.delete({ group: '', version: 'v1', resource: 'pods', namespace: 'ns', name: 'p' }, { uid: 'u' });
    // A socket is free again one event loop turn after its answer.
    await new Promise((resolve) => setImmediate(resolve));
    await rest.request('GET', '/api/v1/pods');
    expect(seen).toHaveLength(2);
    expect(seen[1]?.port, 'the GET went over the connection of the DELETE').toBe(seen[0]?.port);
  });

  it('reads the credentials again after a 401 and retries once with the new token', async () => {
    const token = { value: 'old' };
    const rest = client(token);
    await rest.request('GET', '/version');
    token.value = 'new';
    replies = [(_req, res) => json(res, 401, { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' })];
    await rest.request('GET', '/api/v1/pods');
    expect(seen.map((s) => s.authorization)).toEqual(['Bearer old', 'Bearer old', 'Bearer new']);
  });

  it('a 401 that persists after the re-read is a KubeError that heals (retried later, not dropped)', async () => {
    const unauthorized: Reply = (_req, res) => json(res, 401, { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' });
    replies = [unauthorized, unauthorized];
    const err: unknown = await client({ value: 't' })
      .request('GET', '/api/v1/pods')
      .catch((e: unknown) => e);
    expect(isKubeError(err, 'Unauthorized') && err.retryClass).toBe('heals');
    expect(seen).toHaveLength(2);
  });
});
