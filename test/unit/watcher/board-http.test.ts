/**
 * Bull Board's HTTP surface, served by the ops server over queues on a real redis-server: the Host check of a
 * board without credentials, the same-origin check of writes, Kubernetes tokens through a reviewer, and a
 * failure inside the board answered without the error's text.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serveMount } from '../../../harness/ops-mount.ts';
import { boardHandler, type BoardAuth } from '../../../src/watcher/board.ts';
import type { BoardGrant, TokenReviewer } from '../../../src/watcher/board-kube-auth.ts';
import { ReviewRateLimited } from '../../../src/watcher/board-review-limit.ts';
import type { ReconcileQueue } from '../../../src/queue/queues.ts';
import { useRedis } from '../queue/support.ts';

const redis = useRedis();
const TOKEN = 'a-board-token-of-at-least-32-bytes';
let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

async function serve(queue: ReconcileQueue, auth: BoardAuth, reviewer?: TokenReviewer, readOnly = false): Promise<string> {
  const handler = boardHandler([queue as never], { basePath: '/board', readOnly, auth, reviewer });
  const server = await serveMount('/board', handler);
  closers.push(server.close);
  return server.url;
}

/** A request with a Host header of our choosing (fetch does not let one set Host). */
async function request(
  base: string,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  const { request: httpRequest } = await import('node:http');
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Bull Board over HTTP', () => {
  it('without credentials answers only requests addressed to a loopback name', async () => {
    const base = await serve(redis.reconcileQueue(redis.config()), { kind: 'none' });
    const port = new URL(base).port;
    expect((await request(base, '/board/api/queues', { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await request(base, '/board/api/queues', { headers: { host: `[::1]:${port}` } })).status).toBe(200);
    const rebound = await request(base, '/board/api/queues', { headers: { host: `attacker.example:${port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('reconcile');
  });

  it('refuses a write from another origin (403) before anything else, and lets the same origin through', async () => {
    const queue = redis.reconcileQueue(redis.config());
    const base = await serve(queue, { kind: 'token', token: TOKEN });
    const host = new URL(base).host;
    const auth = { authorization: `Bearer ${TOKEN}`, host };
    const clean = '/board/api/queues/reconcile/clean/completed';
    expect((await request(base, clean, { method: 'PUT', headers: { ...auth, origin: 'http://attacker.example' } })).status).toBe(403);
    expect((await request(base, clean, { method: 'PUT', headers: auth })).status).toBe(403);
    expect((await request(base, clean, { method: 'PUT', headers: { ...auth, origin: `http://${host}` } })).status).toBe(200);
    expect((await request(base, clean, { method: 'PUT', headers: { host, origin: `http://${host}` } })).status).toBe(401);
  });

  it('opens to a token the reviewer accepts, as Bearer or Basic password, and says 503 when it cannot review', async () => {
    const queue = redis.reconcileQueue(redis.config());
    const seen: string[] = [];
    let failing = false;
    const reviewer: TokenReviewer = (token) => {
      seen.push(token);
      return failing ? Promise.reject(new Error('apiserver down: secret detail')) : Promise.resolve(token === 'kube-token' ? 'read' : 'none');
    };
    const base = await serve(queue, { kind: 'kubernetes', access: { group: '', resource: 'services', namespace: 'ebb', name: undefined } }, reviewer);
    const get = (authorization?: string): Promise<{ status: number; body: string }> =>
      request(base, '/board/api/queues', { headers: authorization ? { authorization } : {} });
    expect((await get('Bearer kube-token')).status).toBe(200);
    expect((await get(`Basic ${Buffer.from('me:kube-token').toString('base64')}`)).status).toBe(200);
    expect((await get('Bearer other')).status).toBe(401);
    expect((await get()).status).toBe(401);
    failing = true;
    const down = await get('Bearer kube-token');
    expect(down.status).toBe(503);
    expect(down.body).not.toContain('secret detail');
    expect(seen).toEqual(['kube-token', 'kube-token', 'other', 'kube-token']);
  });

  it('lets a user who may only look read the board (read-only) and refuses their changes; an editor changes jobs', async () => {
    const queue = redis.reconcileQueue(redis.config());
    const grants: Record<string, BoardGrant> = { viewer: 'read', editor: 'write' };
    const clients: string[] = [];
    const reviewer: TokenReviewer = (token, client) => {
      clients.push(client);
      return Promise.resolve(grants[token] ?? 'none');
    };
    const access = { group: 'apps.ebb.dev', resource: 'apps', namespace: undefined, name: undefined };
    const base = await serve(queue, { kind: 'kubernetes', access }, reviewer);
    const host = new URL(base).host;
    const as = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}`, host, origin: `http://${host}` });
    const clean = '/board/api/queues/reconcile/clean/completed';
    const refused = await request(base, clean, { method: 'PUT', headers: as('viewer') });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('update on apps.apps.ebb.dev');
    expect((await request(base, clean, { method: 'PUT', headers: as('editor') })).status).toBe(200);
    // The viewer's board is the read-only one (no retry or clean buttons); the editor's is not.
    const readOnlyOf = async (token: string): Promise<boolean | undefined> => {
      const res = await request(base, '/board/api/queues', { headers: as(token) });
      const body = JSON.parse(res.body) as { queues: { readOnlyMode?: boolean }[] };
      return body.queues[0]?.readOnlyMode;
    };
    expect(await readOnlyOf('viewer')).toBe(true);
    expect(await readOnlyOf('editor')).toBe(false);
    expect(new Set(clients)).toEqual(new Set(['127.0.0.1']));
  });

  it('answers 429 with Retry-After, and no review, when the reviewer is over its rate limit', async () => {
    const queue = redis.reconcileQueue(redis.config());
    const reviewer: TokenReviewer = () => Promise.reject(new ReviewRateLimited(3));
    const base = await serve(queue, { kind: 'kubernetes', access: { group: '', resource: 'services', namespace: 'ebb', name: undefined } }, reviewer);
    const { request: httpRequest } = await import('node:http');
    const res = await new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
      const req = httpRequest(new URL('/board/api/queues', base), { headers: { authorization: 'Bearer made-up' } }, (r) => {
        r.resume();
        resolve({ status: r.statusCode ?? 0, retryAfter: r.headers['retry-after'] });
      });
      req.on('error', reject);
      req.end();
    });
    expect(res).toEqual({ status: 429, retryAfter: '3' });
  });

  it("answers a failure inside the board with 500 and without the error's text", async () => {
    const connection = redis.connection(false);
    const { createReconcileQueue } = await import('../../../src/queue/queues.ts');
    const queue = createReconcileQueue(connection, redis.config());
    closers.push(() => queue.close().catch(() => undefined));
    const base = await serve(queue, { kind: 'none' });
    connection.disconnect();
    const res = await request(base, '/board/api/queues');
    expect(res.status).toBe(500);
    expect(res.body).not.toMatch(/connection|closed|redis/i);
  });
});
