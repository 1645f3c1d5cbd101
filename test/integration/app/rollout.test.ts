/**
 * Rolling updates on the sandbox with the real watcher and worker: partition, maxUnavailable, pause and
 * resume, OnDelete, rollback. Every assertion reads pods, revisions and status from the apiserver; the
 * invariants are checked on every poll.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType } from '../../../src/api/keys.ts';
import { sandbox } from '../support.ts';
import { core } from '../../../src/kube/paths.ts';
import { createApp, patchApp, revisionOf, revisionsOf, settled, template, uniqueName, unavailable, until, useController, type Snapshot } from './harness.ts';

const ctl = useController('app-roll');

/** Records, over every poll, the UIDs seen per pod name, and the most replicas unavailable at once. */
function watcher() {
  const uids = new Map<string, Set<string>>();
  let peak = 0;
  return {
    onEach: (s: Snapshot) => {
      peak = Math.max(peak, unavailable(s));
      for (const p of s.pods) {
        const set = uids.get(p.metadata.name ?? '') ?? new Set<string>();
        set.add(p.metadata.uid ?? '');
        uids.set(p.metadata.name ?? '', set);
      }
    },
    replaced: (name: string) => (uids.get(name)?.size ?? 0) > 1,
    peak: () => peak,
  };
}

describe('rolling update', () => {
  it('with partition 3 updates only ordinals 3 and 4, then all with partition 0', async () => {
    const name = uniqueName('part');
    await createApp(ctl.ns, name, { replicas: 5, podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } });
    const v1 = (await settled(ctl.ns, name)).app.status?.updateRevision;
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const w = watcher();
    const partial = await until(
      ctl.ns,
      name,
      (s) => s.app.status?.updatedReplicas === 2 && s.app.status.readyReplicas === 5 && s.app.status.observedGeneration === 2,
      { onEach: w.onEach },
    );
    const v2 = partial.app.status?.updateRevision;
    expect(v2).not.toBe(v1);
    expect(partial.pods.map(revisionOf)).toEqual([v1, v1, v1, v2, v2]);
    expect(partial.app.status).toMatchObject({ currentRevision: v1, currentReplicas: 3, updatedReplicas: 2 });
    expect(partial.app.status?.conditions).toContainEqual(
      expect.objectContaining({ type: ConditionType.progressing, status: 'False', reason: 'RolloutComplete' }),
    );
    for (const i of [0, 1, 2]) expect(w.replaced(`${name}-${i}`)).toBe(false);
    expect(w.peak()).toBeLessThanOrEqual(1);

    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { partition: 0 } } });
    const done = await settled(ctl.ns, name, v2);
    expect(done.app.status).toMatchObject({ currentRevision: v2, currentReplicas: 5, updatedReplicas: 5, updatedReadyReplicas: 5 });
    expect((await revisionsOf(ctl.ns, name)).map((r) => [r.metadata.name, r.revision])).toEqual([
      [v1, 1],
      [v2, 2],
    ]);
  });

  it('with maxUnavailable 2 replaces two pods at a time, never more', async () => {
    const name = uniqueName('mu');
    await createApp(ctl.ns, name, {
      replicas: 6,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
    });
    await settled(ctl.ns, name);
    const w = watcher();
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    await until(
      ctl.ns,
      name,
      (s) =>
        s.app.metadata.generation === 2 &&
        s.app.status?.observedGeneration === 2 &&
        s.pods.length === 6 &&
        s.pods.every((p) => revisionOf(p) === s.app.status?.updateRevision) &&
        s.app.status.readyReplicas === 6,
      { onEach: w.onEach },
    );
    expect(w.peak()).toBeLessThanOrEqual(2);
    expect(w.peak()).toBeGreaterThanOrEqual(1);
    await settled(ctl.ns, name);
  });

  it('paused mid-rollout updates nothing more (scaling continues), then resumes', async () => {
    const name = uniqueName('pause');
    await createApp(ctl.ns, name, { replicas: 4, podManagementPolicy: 'Parallel' });
    const v1 = (await settled(ctl.ns, name)).app.status?.updateRevision;
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const first = await until(ctl.ns, name, (s) => (s.app.status?.updatedReplicas ?? 0) >= 1 && s.app.status?.observedGeneration === 2);
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: true } } });
    const pausedAt = await until(
      ctl.ns,
      name,
      (s) => s.app.status?.observedGeneration === 3 && s.app.status.readyReplicas === 4 && s.pods.every((p) => !p.metadata.deletionTimestamp),
    );
    const v2 = first.app.status?.updateRevision;
    const updatedWhenPaused = pausedAt.pods.filter((p) => revisionOf(p) === v2).length;
    expect(updatedWhenPaused).toBeGreaterThanOrEqual(1);
    expect(updatedWhenPaused).toBeLessThan(4);
    expect(pausedAt.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.paused, status: 'True', reason: 'PausedBySpec' }));
    // Hold: nothing is replaced while paused, even across a scale-up.
    const uids = new Set(pausedAt.pods.map((p) => p.metadata.uid));
    await patchApp(ctl.ns, name, { replicas: 5 });
    const scaled = await until(ctl.ns, name, (s) => s.pods.length === 5 && s.app.status?.readyReplicas === 5);
    await new Promise((r) => setTimeout(r, 1500));
    const held = await until(ctl.ns, name, () => true);
    expect(held.pods.slice(0, 4).every((p) => uids.has(p.metadata.uid))).toBe(true);
    expect(held.pods.slice(0, 4).filter((p) => revisionOf(p) === v1)).toHaveLength(4 - updatedWhenPaused);
    expect(scaled.pods[4] && revisionOf(scaled.pods[4])).toBe(v2);
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    const done = await settled(ctl.ns, name, v2);
    expect(done.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.paused, status: 'False', reason: 'Resumed' }));
  });

  it('OnDelete leaves pods alone until someone deletes one', async () => {
    const name = uniqueName('ondel');
    await createApp(ctl.ns, name, { replicas: 3, podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } });
    const before = await settled(ctl.ns, name);
    const v1 = before.app.status?.updateRevision;
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const seen = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === 2);
    const v2 = seen.app.status?.updateRevision;
    expect(v2).not.toBe(v1);
    await new Promise((r) => setTimeout(r, 1500));
    const still = await until(ctl.ns, name, () => true);
    expect(still.pods.map((p) => p.metadata.uid)).toEqual(before.pods.map((p) => p.metadata.uid));
    const victim = still.pods[1];
    await sandbox().rest.delete(core('pods', ctl.ns, victim?.metadata.name), { uid: victim?.metadata.uid });
    const after = await until(ctl.ns, name, (s) => s.pods.length === 3 && s.app.status?.readyReplicas === 3 && s.app.status.updatedReplicas === 1);
    expect(after.pods.map(revisionOf)).toEqual([v1, v2, v1]);
    expect(after.app.status).toMatchObject({ currentRevision: v1, updateRevision: v2, currentReplicas: 2 });
  });

  it('a rollback to the previous template reuses its revision', async () => {
    const name = uniqueName('back');
    await createApp(ctl.ns, name, { replicas: 2, podManagementPolicy: 'Parallel' });
    const v1 = (await settled(ctl.ns, name)).app.status?.updateRevision;
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const mid = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === 2 && s.app.status.updateRevision !== v1);
    const v2 = mid.app.status?.updateRevision;
    await settled(ctl.ns, name, v2);
    await patchApp(ctl.ns, name, { template: template(name, 'v1') });
    const back = await settled(ctl.ns, name, v1);
    expect(back.app.status).toMatchObject({ currentRevision: v1, updateRevision: v1 });
    expect((await revisionsOf(ctl.ns, name)).map((r) => [r.metadata.name, r.revision])).toEqual([
      [v2, 2],
      [v1, 3],
    ]);
  });

  it('keeps revisionHistoryLimit across rollouts completed without listing the revisions, and its count bounds them', async () => {
    const name = uniqueName('hist');
    await createApp(ctl.ns, name, { replicas: 2, podManagementPolicy: 'Parallel', revisionHistoryLimit: 1 });
    let last = (await settled(ctl.ns, name)).app.status?.updateRevision;
    for (const tag of ['v2', 'v3', 'v4']) {
      await patchApp(ctl.ns, name, { template: template(name, tag) });
      const next = (await until(ctl.ns, name, (s) => s.app.status?.updateRevision !== last)).app.status?.updateRevision;
      const done = await settled(ctl.ns, name, next);
      const revisions = await revisionsOf(ctl.ns, name);
      // The update revision and at most one of history; the status's count never below what exists.
      expect(revisions.length).toBeLessThanOrEqual(2);
      expect(revisions.map((r) => r.metadata.name)).toContain(next);
      expect(done.app.status?.revisionCount ?? 0).toBeGreaterThanOrEqual(revisions.length);
      last = next;
    }
  });
});
