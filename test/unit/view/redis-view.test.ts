/**
 * The view on a real redis-server: what the watcher writes (`redisViewFeed`) is what a worker's one read
 * (`redisViewStore`) judges usable, a pod's delete leaves a tombstone, and an App's key goes with the App and
 * its last pod.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/types.ts';
import { judge } from '../../../src/view/freshness.ts';
import { Field, listsKey, viewKey } from '../../../src/view/keys.ts';
import { redisViewStore } from '../../../src/view/store.ts';
import { redisViewFeed } from '../../../src/view/writer.ts';
import { useRedis } from '../queue/support.ts';

const redis = useRedis();
const NS = 'ns';
const HOUR = 3_600_000;

function app(rv: string, labels: Record<string, string> = {}, name = 'web'): KubeObject & { spec: unknown } {
  return {
    apiVersion: 'apps.ebb.dev/v1',
    kind: 'App',
    metadata: { name, namespace: NS, uid: `${name}-uid`, resourceVersion: rv, labels, managedFields: [{ manager: 'ebb' }] },
    spec: { selector: { matchLabels: { app: 'web' } } },
  };
}

function pod(name: string, rv: string, extra: Partial<NonNullable<KubeObject['metadata']>> = {}, of = 'web'): KubeObject {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      resourceVersion: rv,
      labels: { app: of, 'apps.ebb.dev/app': of },
      ownerReferences: [{ apiVersion: 'apps.ebb.dev/v1', kind: 'App', name: of, uid: `${of}-uid`, controller: true }],
      ...extra,
    },
  };
}

function setup() {
  const conn = redis.connection(false);
  const { prefix } = redis.config();
  const feed = redisViewFeed(conn, prefix, { limitBytes: 4096, appPods: 3 });
  const store = redisViewStore(conn, prefix);
  return { conn, prefix, feed, store };
}

async function listed(feed: ReturnType<typeof setup>['feed'], apps: KubeObject[], pods: KubeObject[]): Promise<void> {
  await feed.page('apps', 'app', feed.newList(), apps, { first: true, last: true });
  await feed.page('pods', 'pod', feed.newList(), pods, { first: true, last: true });
}

describe('the view in Redis', () => {
  it('reads what the watcher listed and watched in one round trip, once a fresh list vouched for it', async () => {
    const { feed, store } = setup();
    await listed(feed, [app('10')], [pod('web-0', '11'), pod('web-1', '12')]);
    // No worker listed the pods fresh yet: a pod without the App label would not be in the view.
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toEqual({ use: false, why: 'fresh', reason: 'unchecked' });
    await store.record(NS, 'web', Field.checked, '1000 0');
    await feed.event('pods', 'pod', { type: 'MODIFIED', object: pod('web-1', '13') });
    const v = judge(await store.read(NS, 'web'), NS, 1000, HOUR);
    expect(v.use).toBe(true);
    if (!v.use) return;
    expect(v.app.metadata).not.toHaveProperty('managedFields');
    expect(v.pods.map((p) => [p.metadata.name, p.metadata.resourceVersion]).sort()).toEqual([
      ['web-0', '11'],
      ['web-1', '13'],
    ]);
  });

  it('waits for a view behind ebb own writes, and a delete seen as a tombstone satisfies a create before it', async () => {
    const { feed, store } = setup();
    await listed(feed, [app('10')], [pod('web-0', '11')]);
    await store.record(NS, 'web', Field.checked, '1000 0');
    await store.record(NS, 'web', Field.wrotePod('web-1'), '20');
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toEqual({ use: false, why: 'wait', behind: [Field.wrotePod('web-1')] });
    // The pod ebb created went before the watcher saw it: its tombstone is past the create.
    await feed.event('pods', 'pod', { type: 'DELETED', object: pod('web-1', '25') });
    const v = judge(await store.read(NS, 'web'), NS, 1000, HOUR);
    expect(v.use && v.pods.map((p) => p.metadata.name)).toEqual(['web-0']);
  });

  it('reads fresh while a source relists, and once the watcher stops keeping its marks', async () => {
    const { conn, prefix, feed, store } = setup();
    await listed(feed, [app('10')], [pod('web-0', '11')]);
    await store.record(NS, 'web', Field.checked, '1000 0');
    const again = feed.newList();
    await feed.page('pods', 'pod', again, [pod('web-0', '11')], { first: true, last: false });
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toMatchObject({ why: 'fresh', reason: 'not-listed' });
    await feed.page('pods', 'pod', again, [], { first: false, last: true });
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR).use).toBe(true);
    expect(await conn.pttl(listsKey(prefix))).toBeGreaterThan(0);
    await feed.forget();
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toMatchObject({ why: 'fresh', reason: 'not-listed' });
  });

  it('stores no object over the size limit: its App reads fresh until it shrinks', async () => {
    const { feed, store } = setup();
    await listed(feed, [app('10')], [pod('web-0', '11')]);
    await store.record(NS, 'web', Field.checked, '1000 0');
    await feed.event('pods', 'pod', { type: 'MODIFIED', object: pod('web-0', '12', { annotations: { fat: 'x'.repeat(8192) } }) });
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toMatchObject({ why: 'fresh', reason: 'oversized' });
    await feed.event('pods', 'pod', { type: 'MODIFIED', object: pod('web-0', '13') });
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR).use).toBe(true);
    // One the watcher itself left out (its App unknown): its namespace reads fresh until the pod is seen again.
    feed.tooLarge('pods', 'pod', { name: 'web-2', namespace: NS, limitBytes: 1 });
    await feed.event('pods', 'pod', { type: 'MODIFIED', object: pod('web-0', '14') });
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toMatchObject({ why: 'fresh', reason: 'oversized' });
    await feed.event('pods', 'pod', { type: 'DELETED', object: pod('web-2', '15') });
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR).use).toBe(true);
  });

  it("removes the App's key with the App and its last pod, and never a live App's (a label valued gone)", async () => {
    const { conn, prefix, feed, store } = setup();
    const key = viewKey(prefix, NS, 'web');
    await listed(feed, [app('10', { state: 'gone' })], [pod('web-0', '11')]);
    await store.record(NS, 'web', Field.wrotePod('web-0'), '11');
    await feed.event('pods', 'pod', { type: 'DELETED', object: pod('web-0', '12') });
    expect(await conn.exists(key)).toBe(1);
    await feed.event('pods', 'pod', { type: 'ADDED', object: pod('web-0', '13') });
    await feed.event('apps', 'app', { type: 'DELETED', object: app('14') });
    expect(await conn.exists(key)).toBe(1);
    await feed.event('pods', 'pod', { type: 'DELETED', object: pod('web-0', '15') });
    expect(await conn.exists(key)).toBe(0);
  });

  it('holds at most the cap of pods per App: past it that App reads fresh, another keeps its view', async () => {
    const { conn, prefix, feed, store } = setup();
    const many = ['web-0', 'web-1', 'web-2', 'web-3', 'web-4'].map((n, i) => pod(n, `${11 + i}`));
    const pods = feed.newList();
    await feed.page('apps', 'app', feed.newList(), [app('10'), app('10', {}, 'db')], { first: true, last: true });
    await feed.page('pods', 'pod', pods, [...many.slice(0, 4), pod('db-0', '20', {}, 'db')], { first: true, last: true });
    await store.record(NS, 'web', Field.checked, '1000 0');
    await store.record(NS, 'db', Field.checked, '1000 0');
    await feed.event('pods', 'pod', { type: 'ADDED', object: many[4]! });
    // A tenant's fifth pod and its delete add nothing: the hash holds the cap's three pods.
    await feed.event('pods', 'pod', { type: 'DELETED', object: pod('web-4', '30') });
    const podFields = async (): Promise<string[]> => Object.keys(await conn.hgetall(viewKey(prefix, NS, 'web'))).filter((f) => f.startsWith(Field.podPrefix));
    expect((await podFields()).sort()).toEqual(['p:web-0', 'p:web-1', 'p:web-2']);
    expect(judge(await store.read(NS, 'web'), NS, 1000, HOUR)).toEqual({ use: false, why: 'fresh', reason: 'too-many-pods' });
    const db = judge(await store.read(NS, 'db'), NS, 1000, HOUR);
    expect(db.use && db.pods.map((p) => p.metadata.name)).toEqual(['db-0']);
    // The App shrank to what fits: once the watcher relists, the App reads the view again.
    await feed.page('pods', 'pod', feed.newList(), [...many.slice(0, 3), pod('db-0', '20', {}, 'db')], { first: true, last: true });
    const web = judge(await store.read(NS, 'web'), NS, 1000, HOUR);
    expect(web.use && web.pods.map((p) => p.metadata.name).sort()).toEqual(['web-0', 'web-1', 'web-2']);
    // The App goes with its pods; one the cap left out, deleted last, does not bring its hash back.
    await feed.event('apps', 'app', { type: 'DELETED', object: app('40') });
    for (const p of many.slice(0, 3)) await feed.event('pods', 'pod', { type: 'DELETED', object: p });
    expect(await conn.exists(viewKey(prefix, NS, 'web'))).toBe(0);
    await feed.event('pods', 'pod', { type: 'DELETED', object: many[3]! });
    expect(await conn.exists(viewKey(prefix, NS, 'web'))).toBe(0);
  });

  it('fails an event whose write did not land, whether one command or a MULTI of several: its keys are not enqueued over it', async () => {
    const { conn, prefix, feed, store } = setup();
    await listed(feed, [app('10'), app('10', {}, 'db')], [pod('web-0', '11')]);
    await store.record(NS, 'db', Field.checked, '1000 0');
    // A key of the wrong type stands in for any write Redis refuses.
    await conn.set(viewKey(prefix, NS, 'web'), 'not a hash');
    await expect(feed.event('pods', 'pod', { type: 'MODIFIED', object: pod('web-0', '12') })).rejects.toThrow(/WRONGTYPE/);
    // A pod labelled for web that db now controls: db's hash gains it and web's loses it, in one MULTI.
    const moved = pod('web-0', '13', { ownerReferences: [{ apiVersion: 'apps.ebb.dev/v1', kind: 'App', name: 'db', uid: 'db-uid', controller: true }] });
    await expect(feed.event('pods', 'pod', { type: 'MODIFIED', object: moved })).rejects.toThrow(/WRONGTYPE/);
    await conn.del(viewKey(prefix, NS, 'web'));
    await feed.event('pods', 'pod', { type: 'MODIFIED', object: moved });
    const db = judge(await store.read(NS, 'db'), NS, 1000, HOUR);
    expect(db.use && db.pods.map((p) => [p.metadata.name, p.metadata.resourceVersion])).toEqual([['web-0', '13']]);
  });
});
