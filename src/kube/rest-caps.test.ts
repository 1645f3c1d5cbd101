/**
 * Byte caps against a scripted local HTTP server: an answer over its cap is refused from its Content-Length
 * before its body is read, or abandoned once the streamed bytes pass the cap; a list page over the cap is asked
 * again with a smaller limit from the same continue token, and an object alone over it is skipped and named
 * from a metadata-only page; a watch event over its cap is skipped, named, and the watch goes on.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { byteBudget } from './bounded-body.ts';
import { isKubeError } from './errors.ts';
import type { KubeConfig } from './kubeconfig.ts';
import { PagedList, type FetchPage, type OversizedObject } from './paged-list.ts';
import { core } from './paths.ts';
import { ACCEPT_METADATA_LIST, KubeRest } from './rest.ts';
import { listWatch, type WatchEvent } from './watch.ts';
import type { KubeObject } from './types.ts';

type Reply = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let url = '';
let reply: Reply = (_req, res) => res.end('{}');
let closed: { written: number }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => reply(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  server.closeAllConnections();
  closed = [];
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client(): KubeRest {
  const config: KubeConfig = { source: 'test', server: url, tls: {}, proxyUrl: undefined, credentials: () => Promise.resolve({ headers: {} }) };
  return new KubeRest(config, { requestTimeoutMs: 20_000 });
}

const MiB = 1024 * 1024;

/** Writes `chunk` forever (until the client goes away), recording how much it wrote. */
function endless(res: ServerResponse, chunk: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const seen = { written: 0 };
  const write = (): void => {
    while (!res.destroyed && res.write(chunk)) seen.written += chunk.length;
    if (!res.destroyed) res.once('drain', write);
  };
  res.on('close', () => closed.push(seen));
  write();
}

describe('answer byte caps', () => {
  it('refuses an answer whose Content-Length is over the cap without reading it', async () => {
    reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * MiB) });
      res.write('{"items":[');
      // Never finishes: a client that waited for the body would hit its 20 s deadline.
    };
    const started = Date.now();
    const err: unknown = await client()
      .request('GET', '/api/v1/pods', { maxBytes: MiB })
      .catch((e: unknown) => e);
    expect(isKubeError(err, 'TooLarge') && err.limitBytes).toBe(MiB);
    expect(isKubeError(err) && err.retryClass).toBe('permanent');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('abandons a streamed answer as soon as it passes the cap', async () => {
    reply = (_req, res) => endless(res, Buffer.alloc(64 * 1024, 0x20));
    const err: unknown = await client()
      .request('GET', '/api/v1/pods', { maxBytes: 2 * MiB })
      .catch((e: unknown) => e);
    expect(isKubeError(err, 'TooLarge')).toBe(true);
    await expect.poll(() => closed.length).toBe(1);
    // The server stops at what the socket buffers took after the client left, far short of an unbounded read.
    expect(closed[0]?.written).toBeLessThan(32 * MiB);
  });

  it('reads an answer within the cap, charges a budget with it, and refuses once the budget is spent', async () => {
    const body = JSON.stringify({ items: [], pad: 'x'.repeat(300 * 1024) });
    reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    const budget = byteBudget(700 * 1024);
    const rest = client();
    await rest.request('GET', '/api/v1/pods', { maxBytes: MiB, budget });
    await rest.request('GET', '/api/v1/pods', { maxBytes: MiB, budget });
    expect(budget.remaining).toBe(700 * 1024 - 2 * body.length);
    const err: unknown = await rest.request('GET', '/api/v1/pods', { maxBytes: MiB, budget }).catch((e: unknown) => e);
    expect(isKubeError(err, 'TooLarge') && err.budget).toBe(true);
  });
});

/** A scripted collection: objects of the given sizes, served page by page (`limit`, `continue` = an index). */
function collection(sizes: number[]): { requests: { limit: number; metadata: boolean }[] } {
  const log: { limit: number; metadata: boolean }[] = [];
  const obj = (i: number): Record<string, unknown> => ({ metadata: { name: `o-${i}`, namespace: 'ns', uid: `u-${i}`, resourceVersion: String(100 + i) } });
  reply = (req, res) => {
    const q = new URL(req.url ?? '/', url).searchParams;
    const limit = Number(q.get('limit'));
    const from = Number(q.get('continue') ?? '0');
    const metadata = (req.headers.accept ?? '').startsWith(ACCEPT_METADATA_LIST.split(',')[0] ?? '');
    log.push({ limit, metadata });
    const upto = Math.min(sizes.length, from + limit);
    const items = [];
    for (let i = from; i < upto; i++) items.push(metadata ? obj(i) : { ...obj(i), spec: { pad: 'x'.repeat(sizes[i] ?? 0) } });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ metadata: { resourceVersion: '500', ...(upto < sizes.length ? { continue: String(upto) } : {}) }, items }));
  };
  return { requests: log };
}

function fetcher(rest: KubeRest): FetchPage {
  return (query, how) =>
    rest.list(core('pods', 'ns'), query, undefined, how.metadataOnly ? ACCEPT_METADATA_LIST : undefined, { maxBytes: how.maxBytes, budget: how.budget });
}

describe('PagedList', () => {
  it('halves a page over the cap, skips an object alone over it (named from its metadata) and reads on', async () => {
    const KiB = 1024;
    const sizes = [10, 10, 10, 10, 300 * KiB, 10, 10, 10];
    const { requests } = collection(sizes);
    const pages = new PagedList<{ metadata: { name: string } }>(fetcher(client()), { pageSize: 8, pageBytes: 100 * KiB, skipOversized: true });
    const names: string[] = [];
    const skipped: OversizedObject[] = [];
    let last = false;
    for (let page = await pages.next(); page; page = await pages.next()) {
      names.push(...page.items.map((o) => o.metadata.name));
      skipped.push(...page.skipped);
      last = page.last;
    }
    expect(last).toBe(true);
    expect(names).toEqual(['o-0', 'o-1', 'o-2', 'o-3', 'o-5', 'o-6', 'o-7']);
    expect(skipped).toEqual([{ name: 'o-4', namespace: 'ns', uid: 'u-4', resourceVersion: '104', limitBytes: 100 * KiB }]);
    // 8 (refused) → 4 (o-0..3) → 7 capped below 8 (refused) → 3 → 1 (refused) → metadata page of 1 → 1, 2, 4 ...
    expect(requests.slice(0, 6)).toEqual([
      { limit: 8, metadata: false },
      { limit: 4, metadata: false },
      { limit: 7, metadata: false },
      { limit: 3, metadata: false },
      { limit: 1, metadata: false },
      { limit: 1, metadata: true },
    ]);
  });

  it('without skipOversized an object over the cap fails the read with TooLarge', async () => {
    collection([10, 300 * 1024]);
    const pages = new PagedList(fetcher(client()), { pageSize: 10, pageBytes: 100 * 1024 });
    const err: unknown = await (async () => {
      while (await pages.next());
    })().catch((e: unknown) => e);
    expect(isKubeError(err, 'TooLarge')).toBe(true);
  });
});

describe('watch event cap', () => {
  it('skips an event over the cap, names it, and delivers the events after it', async () => {
    const event = (type: string, name: string, rv: string, pad = 0): string =>
      JSON.stringify({
        type,
        object: {
          apiVersion: 'apps.ebb.dev/v1alpha1',
          kind: 'App',
          // Custom objects come with sorted keys: annotations (large) before the name.
          metadata: { annotations: { big: 'y'.repeat(pad) }, name, namespace: 'ns', resourceVersion: rv, uid: `uid-${name}` },
          spec: { args: ['z'.repeat(pad)] },
        },
      }) + '\n';
    reply = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (!(req.url ?? '').includes('watch=1')) {
        res.end(JSON.stringify({ metadata: { resourceVersion: '10' }, items: [] }));
        return;
      }
      res.write(event('ADDED', 'a', '11'));
      res.write(event('MODIFIED', 'fat', '12', 3 * MiB));
      res.write(event('ADDED', 'b', '13'));
      res.write(JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '14' } } }) + '\n');
    };
    const ac = new AbortController();
    const events: string[] = [];
    const skipped: { obj: OversizedObject; type: string | undefined }[] = [];
    const done = listWatch<KubeObject>(
      { rest: client(), ref: { group: 'apps.ebb.dev', version: 'v1alpha1', resource: 'apps' }, signal: ac.signal, eventBytes: MiB },
      {
        onEvent: (ev: WatchEvent<KubeObject>) => {
          events.push(`${ev.type} ${ev.object.metadata?.name ?? ''}`);
          if (events.length === 2) ac.abort();
        },
        onTooLarge: (obj, type) => void skipped.push({ obj, type }),
      },
    ).catch(() => undefined);
    await done;
    expect(events).toEqual(['ADDED a', 'ADDED b']);
    expect(skipped).toEqual([{ obj: { name: 'fat', namespace: 'ns', uid: 'uid-fat', resourceVersion: '12', limitBytes: MiB }, type: 'MODIFIED' }]);
  });
});
