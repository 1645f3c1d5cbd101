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

function app(rv: string, labels: Record<string, string> = {}): KubeObject & { spec: unknown } {
  return {
    apiVersion: 'apps.ebb.dev/v1',
    kind: 'App',
    metadata: { name: 'web', namespace: NS, uid: 'app-uid', resourceVersion: rv, labels, managedFields: [{ manager: 'ebb' }] },
    spec: { selector: { matchLabels: { app: 'web' } } },
  };
}

function pod(name: string, rv: string, extra: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      resourceVersion: rv,
      labels: { app: 'web', 'apps.ebb.dev/app': 'web' },
      ownerReferences: [{ apiVersion: 'apps.ebb.dev/v1', kind: 'App', name: 'web', uid: 'app-uid', controller: true }],
      ...extra,
    },
  };
}

function setup() {
  const conn = redis.connection(false);
  const { prefix } = redis.config();
  const feed = redisViewFeed(conn, prefix, 4096);
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
});
