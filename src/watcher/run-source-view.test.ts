/**
 * A view-writing source against a scripted apiserver: once the view forgot its list (Redis came back), the
 * source's next watch event is not written on top of it; the source relists, and the new list makes it whole.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { appRef } from '../api/group.ts';
import type { KubeConfig } from '../kube/kubeconfig.ts';
import { KubeRest } from '../kube/rest.ts';
import type { ViewFeed } from '../view/writer.ts';
import { appKey } from './keys.ts';
import { PodHolds } from './pod-holds.ts';
import { runSource } from './run-source.ts';
import { KnownKeys, type Sink, type SourceSpec } from './sources.ts';

let server: Server;
let lists = 0;
const app = (name: string): Record<string, unknown> => ({
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'App',
  metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: '5', generation: 1 },
  spec: {},
});

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // A watch delivers one event, then stays open.
    if ((req.url ?? '').includes('watch=1')) return void res.write(`${JSON.stringify({ type: 'ADDED', object: app('b') })}\n`);
    lists++;
    res.end(JSON.stringify({ metadata: { resourceVersion: '9' }, items: [app('a')] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a source writing the view', () => {
  it('relists once the view forgot its list, before it writes another event', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config: KubeConfig = { source: 'test', server: url, tls: {}, proxyUrl: undefined, credentials: () => Promise.resolve({ headers: {} }) };
    const ac = new AbortController();
    const backstop = setTimeout(() => ac.abort(), 10_000);
    const written: string[] = [];
    let forgotten = false;
    let pages = 0;
    const feed: ViewFeed = {
      newList: () => `list-${lists}`,
      page: (_source, _kind, listId, _items, page) => {
        written.push(`page ${listId}`);
        if (page.first) forgotten = false;
        // Redis comes back right after the first list: the watcher forgets the view.
        if (page.last && ++pages === 1) forgotten = true;
        if (page.last && pages === 2) setTimeout(() => ac.abort(), 50);
        return Promise.resolve();
      },
      event: (_source, _kind, ev) => (written.push(`event ${ev.object.metadata?.name ?? ''}`), Promise.resolve()),
      tooLarge: () => undefined,
      forget: () => ((forgotten = true), Promise.resolve()),
      listed: () => !forgotten,
      alive: () => Promise.resolve(),
    };
    const sink: Sink = {
      known: new KnownKeys(),
      holds: new PodHolds({ fire: () => undefined, signal: ac.signal }),
      enqueue: () => Promise.resolve(),
      onWatchEvent: () => undefined,
      onIgnored: () => undefined,
      onRestart: () => undefined,
      onTooLarge: () => undefined,
      view: feed,
    };
    const spec: SourceSpec = { name: 'apps/ns', ref: appRef('ns'), keyOf: appKey, tracked: true, settledOf: () => true, view: 'app' };
    await runSource(spec, {
      rest: new KubeRest(config),
      sink,
      log: pino({ level: 'silent' }),
      signal: ac.signal,
      watchdogMs: 60_000,
      setState: () => undefined,
    }).catch(() => undefined);
    clearTimeout(backstop);
    expect(lists).toBe(2);
    expect(written.slice(0, 2)).toEqual(['page list-1', 'page list-2']);
  });
});
