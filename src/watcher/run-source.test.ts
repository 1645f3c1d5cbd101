/**
 * A source against a scripted apiserver: a failed enqueue is retried for the same keys, with no relist; an App
 * too large to read is skipped, reported and left out of the known keys, while the rest of the list is enqueued.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../api/group.ts';
import { pino } from 'pino';
import type { KubeConfig } from '../kube/kubeconfig.ts';
import type { OversizedObject } from '../kube/paged-list.ts';
import { KubeRest } from '../kube/rest.ts';
import { formatKey, type ObjectKey } from '../queue/names.ts';
import { appKey } from './keys.ts';
import { PodHolds } from './pod-holds.ts';
import { runSource } from './run-source.ts';
import { KnownKeys, type Sink, type SourceSpec } from './sources.ts';

let server: Server;
let lists = 0;
const app = (name: string, pad = 0): Record<string, unknown> => ({
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'App',
  metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: '5', generation: 1 },
  spec: { args: ['x'.repeat(pad)] },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if ((req.url ?? '').includes('watch=1')) return; // a watch that stays open, silent
    lists++;
    const metadataOnly = (req.headers.accept ?? '').includes('PartialObjectMetadataList');
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const all = [app('a'), app('fat', 2 * 1024 * 1024), app('b')];
    const from = Number(q.get('continue') ?? '0');
    const upto = Math.min(all.length, from + Number(q.get('limit')));
    const items = all.slice(from, upto).map((o) => (metadataOnly ? { metadata: o['metadata'] } : o));
    res.end(JSON.stringify({ metadata: { resourceVersion: '9', ...(upto < all.length ? { continue: String(upto) } : {}) }, items }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('runSource', () => {
  it('retries a failed enqueue in place, and skips and reports an App too large to read', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config: KubeConfig = { source: 'test', server: url, tls: {}, proxyUrl: undefined, credentials: () => Promise.resolve({ headers: {} }) };
    const ac = new AbortController();
    const enqueued: string[][] = [];
    const tooLarge: OversizedObject[] = [];
    let failures = 2;
    const known = new KnownKeys();
    const sink: Sink = {
      known,
      holds: new PodHolds({ fire: () => undefined, signal: ac.signal }),
      enqueue: (keys: ObjectKey[]) => {
        enqueued.push(keys.map(formatKey));
        if (failures-- > 0) return Promise.reject(new Error('redis down'));
        if (enqueued.length >= 4) setTimeout(() => ac.abort(), 50);
        return Promise.resolve();
      },
      onWatchEvent: () => undefined,
      onIgnored: () => undefined,
      onRestart: () => undefined,
      onTooLarge: (_ref, obj) => void tooLarge.push(obj),
    };
    const spec: SourceSpec = { name: 'apps/ns', ref: appRef('ns'), keyOf: appKey, tracked: true, settledOf: () => true };
    const states: string[] = [];
    lists = 0;
    await runSource(spec, {
      rest: new KubeRest(config),
      sink,
      log: pino({ level: 'silent' }),
      signal: ac.signal,
      watchdogMs: 60_000,
      setState: (s) => states.push(s),
    }).catch(() => undefined);
    expect(tooLarge.map((o) => o.name)).toEqual(['fat']);
    // The first page (App a, then the list shrinks around `fat`) failed twice and was retried as it was.
    expect(enqueued.slice(0, 3)).toEqual([['App ns/a'], ['App ns/a'], ['App ns/a']]);
    expect(enqueued.flat()).not.toContain('App ns/fat');
    expect(enqueued.flat()).toContain('App ns/b');
    expect(states).toContain('backoff');
    expect(known.lacks('apps/ns', { kind: 'App', namespace: 'ns', name: 'fat' })).toBe(true);
    expect(known.lacks('apps/ns', { kind: 'App', namespace: 'ns', name: 'b' })).toBe(false);
    // Pages asked, by limit: 50, 25, 12, 6, 3 (each holds `fat`: too large), 1 (a), 2 (fat, b: too large), 1 (fat:
    // too large), its metadata, 1 (b). Never a relist from the start, whatever the enqueue failures.
    expect(lists).toBe(10);
  });
});
