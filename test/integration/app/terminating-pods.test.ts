/**
 * An App's status follows its pods while they terminate, whoever deleted them, with the periodic resync off
 * (only watch events bring an App back):
 * - upstream's "delete pod-0 held by a finalizer" scenario: the kubelet stops the pod's containers and the
 *   finalizer keeps the pod; readyReplicas drops at once, not when the pod is gone;
 * - a node drain (cordon, then an eviction of each pod, honoured with the pods' long grace period): the
 *   evicted pods stop counting as current and updated at once, count as ready while they run out their
 *   grace period (as upstream counts them), and as not ready once the kubelet stopped them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { appRef } from '../../../src/api/group.ts';
import { core, resourcePath } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { sandbox } from '../support.ts';
import { createApp, image, settled, uniqueName, until, useController, type Snapshot } from './harness.ts';

const ctl = useController('termpods', { env: { EBB_RESYNC_PERIOD: '0' } });
const HOLD = 'example.com/hold';
/** The drained node's pods' grace period: they run (and stay Ready) that long after their eviction. */
const GRACE_S = 15;

const counts = (s: Snapshot): Record<string, number | undefined> => {
  const st = s.app.status ?? {};
  return {
    replicas: st.replicas,
    readyReplicas: st.readyReplicas,
    availableReplicas: st.availableReplicas,
    currentReplicas: st.currentReplicas,
    updatedReplicas: st.updatedReplicas,
  };
};

describe('the status of an App whose pods are held terminating', () => {
  it('a pod held by a finalizer whose containers stopped counts as not ready within seconds', async () => {
    const { ns } = ctl;
    const { rest } = sandbox();
    const name = uniqueName('fin');
    await createApp(ns, name, { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } });
    const before = await settled(ns, name);
    const pod0 = `${name}-0`;
    await rest.patch(core('pods', ns, pod0), { metadata: { finalizers: [HOLD] } }, PatchType.merge);
    await rest.delete(core('pods', ns, pod0));
    // The kubelet stops its containers; the finalizer keeps the pod, terminating and no longer Ready.
    const stopped = await waitFor(
      async () => {
        const p = await rest.get<Pod>(core('pods', ns, pod0));
        return p.metadata.deletionTimestamp && !isRunningAndReady(p) ? p : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `${pod0} stopped` },
    );
    const stoppedAt = Date.now();
    const s = await until(ns, name, (x) => x.app.status?.readyReplicas === 2, { timeoutMs: 10_000, what: 'readyReplicas 2' });
    const tookMs = Date.now() - stoppedAt;
    const held = s.pods.find((p) => p.metadata.name === pod0);
    expect(held?.metadata.uid).toBe(stopped.metadata.uid);
    expect(held?.metadata.deletionTimestamp).toBeDefined();
    expect(counts(s)).toEqual({ replicas: 3, readyReplicas: 2, availableReplicas: 2, currentReplicas: 2, updatedReplicas: 2 });
    process.stdout.write(`finalizer: ${pod0} phase ${stopped.status?.phase ?? '?'}, readyReplicas 2 after ${tookMs} ms\n`);
    // Let go: the pod is gone, its App creates it again.
    await rest.patch(core('pods', ns, pod0), { metadata: { finalizers: null } }, PatchType.merge);
    const after = await until(ns, name, (x) => x.pods[0]?.metadata.uid !== before.pods[0]?.metadata.uid && x.app.status?.readyReplicas === 3, {
      timeoutMs: 60_000,
      what: `${pod0} recreated and Ready`,
    });
    expect(counts(after)).toEqual({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3 });
  });
});

describe('a node drain with a long grace period', () => {
  let node: DedicatedNode | undefined;
  let app = '';

  beforeAll(async () => {
    // A node of this file's own whose kubelet honours the pods' grace period in full.
    node = await startDedicatedNode({ prefix: 'it-drain', index: 44, timings: { terminationGraceCapMs: Number.POSITIVE_INFINITY } });
  });

  afterAll(async () => {
    if (app)
      await sandbox()
        .rest.delete(appRef(ctl.ns, app))
        .catch(() => undefined);
    await node?.stop();
  });

  it('evicted pods leave current and updated at once, stay ready for their grace period, then are not ready', async () => {
    const { ns } = ctl;
    const { rest } = sandbox();
    const n = node!;
    app = uniqueName('drain');
    const template = {
      metadata: { labels: { app } },
      spec: { containers: [{ name: 'main', image: image('v1') }], terminationGracePeriodSeconds: GRACE_S, ...n.placement },
    };
    await createApp(ns, app, { replicas: 3, podManagementPolicy: 'Parallel', template });
    const before = await settled(ns, app);
    const names = before.pods.map((p) => p.metadata.name);
    // The drain: cordon the node, then evict each of its pods (the eviction API marks them DisruptionTarget).
    await rest.patch(core('nodes', undefined, n.name), { spec: { unschedulable: true } }, PatchType.merge);
    for (const pod of names)
      await rest.request('POST', resourcePath(core('pods', ns, pod, 'eviction')), {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } },
      });
    const evictedAt = Date.now();
    const draining = await until(ns, app, (x) => x.app.status?.currentReplicas === 0, { timeoutMs: 5_000, what: 'currentReplicas 0' });
    const tookMs = Date.now() - evictedAt;
    // Still within the grace period: every pod runs, Ready and terminating.
    expect(Date.now() - evictedAt).toBeLessThan(GRACE_S * 1000);
    expect(draining.pods.map((p) => [p.metadata.name, Boolean(p.metadata.deletionTimestamp), isRunningAndReady(p)])).toEqual(names.map((p) => [p, true, true]));
    expect(draining.pods.every((p) => p.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True'))).toBe(true);
    expect(counts(draining)).toEqual({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 0, updatedReplicas: 0 });
    process.stdout.write(`drain: currentReplicas 0 after ${tookMs} ms\n`);
    // Past the grace period the kubelet stops them and they go; the replacements cannot run on the cordoned node.
    const drained = await until(
      ns,
      app,
      (x) => x.app.status?.readyReplicas === 0 && x.pods.every((p) => !before.pods.some((b) => b.metadata.uid === p.metadata.uid)),
      {
        timeoutMs: (GRACE_S + 30) * 1000,
        what: 'the evicted pods gone and not counted ready',
      },
    );
    expect(drained.pods.every((p) => !isRunningAndReady(p))).toBe(true);
    expect(drained.app.status?.readyReplicas).toBe(0);
    expect(drained.app.status?.availableReplicas).toBe(0);
    // Uncordoned, the replacements run and the App settles.
    await rest.patch(core('nodes', undefined, n.name), { spec: { unschedulable: false } }, PatchType.merge);
    const back = await settled(ns, app, undefined, 60_000);
    expect(counts(back)).toEqual({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3 });
  });
});
