/**
 * The rollouts page over HTTP (the ops server, a store fed by hand, a fake gate and reader): what each kind of
 * viewer sees, ETags, escaping of tenant text, and the assets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serveMount } from '../../../harness/ops-mount.ts';
import type { BoardViewer } from '../board-kube-auth.ts';
import type { AppView } from './detail-model.ts';
import { rolloutsHandler } from './handler.ts';
import { RolloutStore } from './store.ts';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

function app(ns: string, name: string, message = '') {
  const conditions = message ? [{ type: 'RolloutHeld', status: 'True', message }] : [];
  return { metadata: { namespace: ns, name }, spec: {}, status: { replicas: 1, updatedReplicas: 1, currentRevision: 'r', updateRevision: 'r', conditions } };
}

/** Every namespace a limited viewer was reviewed for, in order. */
const reviewed: string[] = [];

/** A viewer limited to `open` namespaces. */
const limited = (...open: string[]): BoardViewer => ({
  kind: 'namespaces',
  allowed: (nss) => {
    reviewed.push(...nss);
    return Promise.resolve(new Set([...nss].filter((n) => open.includes(n))));
  },
});

async function serve(grant: BoardViewer, store: RolloutStore, read: string[] = []): Promise<string> {
  const reader = (namespace: string, name: string): Promise<AppView | undefined> => {
    read.push(`${namespace}/${name}`);
    return Promise.resolve(undefined);
  };
  const handler = rolloutsHandler({
    base: '/rollouts',
    boardPath: '/board',
    store,
    gate: (_req, res) => {
      if (grant === 'none') {
        res.writeHead(401);
        res.end();
      }
      return Promise.resolve(grant);
    },
    reader,
  });
  const server = await serveMount('/rollouts', handler);
  closers.push(server.close);
  return server.url;
}

function store(): RolloutStore {
  const s = new RolloutStore();
  s.seen('App team-a/web', app('team-a', 'web'));
  s.seen('App team-b/secret-app', app('team-b', 'secret-app', 'team-b private message'));
  return s;
}

describe('the rollouts page', () => {
  it('shows a cluster-wide viewer every namespace, a limited one only its own', async () => {
    const all = await (await fetch(`${await serve('read', store())}/rollouts/`)).text();
    expect(all).toContain('secret-app');
    expect(all).toContain('>web</a>');
    const read: string[] = [];
    const base = await serve(limited('team-a'), store(), read);
    const mine = await (await fetch(`${base}/rollouts/?namespace=team-b`)).text();
    const page = await (await fetch(`${base}/rollouts/`)).text();
    for (const body of [mine, page]) {
      expect(body).not.toContain('secret-app');
      expect(body).not.toContain('private message');
    }
    expect(page).not.toContain('team-b');
    expect(page).toContain('>web</a>');
    // Another namespace's App page is 404, as an App that does not exist, without reading it.
    reviewed.length = 0;
    expect((await fetch(`${base}/rollouts/team-b/secret-app`)).status).toBe(404);
    expect(read).toEqual([]);
    // A page of one namespace reviews that namespace alone.
    expect(reviewed).toEqual(['team-b']);
    reviewed.length = 0;
    await fetch(`${base}/rollouts/?namespace=team-a`);
    expect(reviewed).toEqual(['team-a']);
  });

  it('answers 304 to a request holding the page ETag, and a new ETag once an App changes', async () => {
    const s = store();
    const base = await serve('read', s);
    const first = await fetch(`${base}/rollouts/`);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    expect(first.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await fetch(`${base}/rollouts/`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    s.seen('App team-a/web', app('team-a', 'web', 'now held'));
    const changed = await fetch(`${base}/rollouts/`, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('now held');
  });

  it('escapes tenant text', async () => {
    const s = new RolloutStore();
    s.seen('App team-a/web', app('team-a', 'web', '<script>alert(1)</script>'));
    const body = await (await fetch(`${await serve('read', s)}/rollouts/`)).text();
    expect(body).not.toContain('<script>alert');
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('leaves the answer to the gate without a login, serves its assets, refuses writes and odd paths', async () => {
    const base = await serve('none', store());
    expect((await fetch(`${base}/rollouts/`)).status).toBe(401);
    const js = await fetch(`${base}/rollouts/-/uPlot.iife.min.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await js.text()).length).toBeGreaterThan(10_000);
    expect((await fetch(`${base}/rollouts/-/page.js`)).status).toBe(200);
    expect((await fetch(`${base}/rollouts/-/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${base}/rollouts/a/b/c`)).status).toBe(404);
    expect((await fetch(`${base}/rollouts/`, { method: 'POST' })).status).toBe(405);
  });
});
