/**
 * The view-reading AppClient against an in-memory cluster and an in-memory view: it answers from the view when
 * the rule allows, reads fresh otherwise (and a fresh list vouches for the view), waits for a view behind ebb's
 * writes, and records every write's resourceVersion next to the view.
 */
import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../../../harness/fakes/cluster.ts';
import type { KubeObject, Pod } from '../../../src/kube/types.ts';
import { viewedAppClient, type ViewOptions } from '../../../src/view/app-client.ts';
import { upsertChanges } from '../../../src/view/changes.ts';
import type { RawView } from '../../../src/view/freshness.ts';
import { Field } from '../../../src/view/keys.ts';
import type { ViewStore } from '../../../src/view/store.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { selectorString } from '../../../src/workers/app/pods/selector.ts';
import { newPodForOrdinal } from '../../../src/workers/app/pods/builder.ts';
import { makeApp, NS } from '../app/fixtures.ts';

const LIST = 'L';

class MemoryView implements ViewStore {
  readonly fields = new Map<string, string>();
  reads = 0;
  /** Called at each read, before it answers (the watcher catching up). */
  onRead: (() => void) | undefined;

  watch(kind: 'app' | 'pod', obj: KubeObject): void {
    for (const c of upsertChanges(kind, obj, LIST)) this.fields.set(c.field, c.value);
  }

  read(): Promise<RawView | undefined> {
    this.reads++;
    this.onRead?.();
    return Promise.resolve({ fields: Object.fromEntries(this.fields), lists: { apps: LIST, pods: LIST } });
  }

  record(_ns: string, _name: string, field: string, value: string): Promise<void> {
    this.fields.set(field, value);
    return Promise.resolve();
  }
}

function setup() {
  // A clock that moves 10 ms at each look (the wait's deadline comes).
  let t = 1000;
  const cluster = new FakeCluster();
  const app = cluster.addApp(makeApp('web', { replicas: 2 }));
  const pods = [0, 1].map((o) => cluster.addPod(newPodForOrdinal(app, app.spec.template, 'rev-1', o)));
  const view = new MemoryView();
  view.watch('app', app);
  for (const p of pods) view.watch('pod', p);
  const reads: string[] = [];
  const opts: ViewOptions = {
    store: view,
    signal: new AbortController().signal,
    now: () => (t += 10),
    checkPeriodMs: 60_000,
    waitMs: 100,
    pollMs: 1,
    onRead: (from, reason) => reads.push(reason ? `${from}:${reason}` : from),
  };
  return { cluster, app, pods, view, reads, client: viewedAppClient(cluster.client(), opts), selector: selectorString(app.spec.selector), opts };
}

describe('viewedAppClient', () => {
  it('reads fresh until a fresh list vouched for the view, then reads the App and its pods from the view alone', async () => {
    const { cluster, client, view, reads, selector } = setup();
    expect(await client.apps.get(NS, 'web')).toBeDefined();
    expect((await client.pods.list(NS, selector)).length).toBe(2);
    expect(view.fields.get(Field.checked)).toMatch(/^\d+ 0$/);
    expect(cluster.calls.count('apps.get') + cluster.calls.count('pods.list')).toBe(2);
    const app = await client.apps.get(NS, 'web');
    const pods = await client.pods.list(NS, selector);
    expect(app?.metadata.name).toBe('web');
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(['web-0', 'web-1']);
    expect(cluster.calls.count('apps.get') + cluster.calls.count('pods.list')).toBe(2);
    expect(reads).toEqual(['fresh:unchecked', 'view']);
  });

  it('keeps reading fresh while the selected pods include one the watcher does not see (no App label)', async () => {
    const { cluster, client, view, selector, app } = setup();
    const orphan = newPodForOrdinal(app, app.spec.template, 'rev-1', 2);
    delete orphan.metadata.labels?.['apps.ebb.dev/app'];
    orphan.metadata.ownerReferences = [];
    cluster.addPod(orphan);
    await client.apps.get(NS, 'web');
    expect((await client.pods.list(NS, selector)).length).toBe(3);
    expect(view.fields.get(Field.checked)).toMatch(/^\d+ 1$/);
    await client.apps.get(NS, 'web');
    await client.pods.list(NS, selector);
    expect(cluster.calls.count('pods.list')).toBe(2);
  });

  it('records its writes, waits for a view that has not seen them, and reads fresh once the wait is over', async () => {
    const { cluster, client, view, reads, selector } = setup();
    view.fields.set(Field.checked, '1000 0');
    const made = await client.pods.create(NS, newPodForOrdinal(cluster.app(NS, 'web')!, cluster.app(NS, 'web')!.spec.template, 'rev-1', 2));
    expect(view.fields.get(Field.wrotePod('web-2'))).toBe(made.metadata.resourceVersion);
    // The watcher sees the create at the third look.
    view.onRead = () => {
      if (view.reads === 3) view.watch('pod', made);
    };
    await client.apps.get(NS, 'web');
    expect((await client.pods.list(NS, selector)).map((p) => p.metadata.name).sort()).toEqual(['web-0', 'web-1', 'web-2']);
    expect(reads).toEqual(['view']);
    // A status write the watcher never sees: the read waits, then reads fresh.
    const status = await client.apps.patchStatus(NS, 'web', { status: { replicas: 3 } });
    expect(view.fields.get(Field.wroteApp)).toBe(status.metadata.resourceVersion);
    view.onRead = undefined;
    await client.apps.get(NS, 'web');
    expect(reads).toEqual(['view', 'fresh:behind']);
    expect(cluster.calls.count('apps.get')).toBe(1);
  });

  it('records a delete by uid, and sends the next read fresh after a write refused as stale', async () => {
    const { cluster, client, view, pods } = setup();
    view.fields.set(Field.checked, '1000 0');
    await client.apps.get(NS, 'web');
    const pod = pods[0] as Pod & { metadata: { uid: string } };
    await client.pods.delete(NS, 'web-0', pod.metadata.uid);
    expect(view.fields.get(Field.deletedPod('web-0'))).toBe(pod.metadata.uid);
    cluster.calls.failNth('pods.create', 1, new KubeError('AlreadyExists', 409, 'pods "web-1" already exists'));
    await expect(client.pods.create(NS, newPodForOrdinal(cluster.app(NS, 'web')!, cluster.app(NS, 'web')!.spec.template, 'rev-1', 1))).rejects.toThrow();
    expect(view.fields.get(Field.checked)).toBe('0 1');
  });
});
