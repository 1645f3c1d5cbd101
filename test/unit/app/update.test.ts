/**
 * Scenario tests: rolling updates (maxUnavailable, partition, paused, OnDelete, rollback) in both pod
 * management policies, with the invariants checked after every step.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType } from '../../../src/api/keys.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const policies = ['OrderedReady', 'Parallel'] as const;
const image = (tag: string) => ({ template: { spec: { containers: [{ name: 'main', image: `registry.example/web:${tag}` }] } } });

async function converged(spec: ConstructorParameters<typeof Scenario>[0], kubelet: ConstructorParameters<typeof Scenario>[1] = {}): Promise<Scenario> {
  const s = new Scenario(spec, kubelet);
  await s.runUntil((x) => x.converged());
  return s;
}

describe.each(policies)('%s', (podManagementPolicy) => {
  it.each([1, 2, '40%'])('updates every pod from the highest ordinal with maxUnavailable %s', async (maxUnavailable) => {
    const s = await converged(
      { replicas: 5, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable } } },
      { terminateTicks: 2, startTicks: 2 },
    );
    const v1 = s.app().status!.updateRevision!;
    const limit = maxUnavailable === '40%' ? 2 : Number(maxUnavailable);
    s.arm({ maxUnavailable: limit });
    s.edit(image('v2'));
    await s.runUntil((x) => x.converged() && x.app().status!.updateRevision !== v1);
    expect(s.violations).toEqual([]);
    expect(s.peakUnavailable).toBe(limit);
    expect(s.cluster.podDeletions.slice(0, 2)).toEqual(['web-4', 'web-3']);
    expect(s.cluster.podDeletions).toHaveLength(5);
    const status = s.app().status!;
    expect(status.currentRevision).toBe(status.updateRevision);
    expect(status).toMatchObject({ replicas: 5, updatedReplicas: 5, currentReplicas: 5, readyReplicas: 5 });
  });

  it('writes the App status about twice per pod recreated, counting its own deletes and creates', async () => {
    const s = await converged(
      { replicas: 6, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } },
      { terminateTicks: 2, startTicks: 2 },
    );
    const v1 = s.app().status!.updateRevision!;
    const before = s.cluster.calls.count('apps.patchStatus');
    s.edit(image('v2'));
    await s.runUntil((x) => x.converged() && x.app().status!.updateRevision !== v1);
    // Per pod: its delete is counted in the status written with it, its replacement's create likewise; what is
    // left is the kubelet's view (terminated, ready). Counting only what was read wrote about 4 per pod (25 here).
    const writes = s.cluster.calls.count('apps.patchStatus') - before;
    expect(writes).toBeLessThanOrEqual(6 * 2 + 3);
    expect(s.app().status).toMatchObject({ replicas: 6, updatedReplicas: 6, readyReplicas: 6 });
  });

  it('keeps pods below the partition, then updates them when the partition drops to 0', async () => {
    const s = await converged({ replicas: 5, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } });
    const v1 = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 1, partition: 3 });
    s.edit(image('v2'));
    await s.runUntil((x) => x.app().status?.updatedReplicas === 2 && x.app().status?.readyReplicas === 5);
    for (let i = 0; i < 5; i++) await s.step();
    expect(s.violations).toEqual([]);
    const status = s.app().status!;
    expect(status).toMatchObject({ currentRevision: v1, currentReplicas: 3, updatedReplicas: 2 });
    expect(s.cluster.podDeletions).toEqual(['web-4', 'web-3']);
    expect(status.conditions?.find((c) => c.type === ConditionType.progressing)).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
    s.arm({ maxUnavailable: 1 });
    s.edit({ updateStrategy: { rollingUpdate: { partition: 0 } } });
    await s.runUntil((x) => x.converged() && x.app().status!.currentRevision !== v1);
    expect(s.cluster.podDeletions).toEqual(['web-4', 'web-3', 'web-2', 'web-1', 'web-0']);
    expect(s.violations).toEqual([]);
  });

  it('paused stops updates but not scaling; resuming finishes the rollout', async () => {
    const s = await converged({ replicas: 4, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } });
    s.arm({ maxUnavailable: 1 });
    s.edit(image('v2'));
    await s.runUntil((x) => (x.app().status?.updatedReplicas ?? 0) >= 1 && x.app().status?.readyReplicas === 4);
    s.edit({ updateStrategy: { rollingUpdate: { paused: true } } });
    const deletionsAtPause = s.cluster.podDeletions.length;
    for (let i = 0; i < 10; i++) await s.step();
    expect(s.cluster.podDeletions).toHaveLength(deletionsAtPause);
    const paused = s.app().status!;
    expect(paused.conditions?.find((c) => c.type === ConditionType.paused)).toMatchObject({ status: 'True', reason: 'PausedBySpec' });
    s.arm({});
    s.edit({ replicas: 6 });
    await s.runUntil((x) => x.pods().length === 6 && x.app().status?.readyReplicas === 6);
    expect(s.cluster.podDeletions).toHaveLength(deletionsAtPause);
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.converged());
    expect(s.app().status!.conditions?.find((c) => c.type === ConditionType.paused)).toMatchObject({ status: 'False', reason: 'Resumed' });
    expect(s.violations).toEqual([]);
  });

  it('OnDelete never deletes a pod for an update; a deleted pod comes back at the update revision', async () => {
    const s = await converged({ replicas: 3, podManagementPolicy, updateStrategy: { type: 'OnDelete' } });
    const v1 = s.app().status!.updateRevision!;
    s.edit(image('v2'));
    for (let i = 0; i < 10; i++) await s.step();
    expect(s.cluster.podDeletions).toEqual([]);
    const v2 = s.app().status!.updateRevision!;
    expect(v2).not.toBe(v1);
    expect(s.revisionCounts()).toEqual({ [v1]: 3 });
    const pod = s.cluster.pods.get(`${NS}/web-1`)!;
    await s.cluster.client().pods.delete(NS, 'web-1', pod.metadata.uid);
    await s.runUntil((x) => x.revisionCounts()[v2] === 1 && x.app().status?.readyReplicas === 3);
    expect(s.app().status).toMatchObject({ currentRevision: v1, currentReplicas: 2, updatedReplicas: 1 });
    expect(s.violations).toEqual([]);
  });

  it('a rollback to an earlier template reuses its revision', async () => {
    const s = await converged({ replicas: 2, podManagementPolicy });
    const v1 = s.app().status!.updateRevision!;
    s.edit(image('v2'));
    await s.runUntil((x) => x.converged() && x.app().status!.updateRevision !== v1);
    const v2 = s.app().status!.updateRevision!;
    s.edit(image('v1'));
    await s.runUntil((x) => x.converged() && x.app().status!.updateRevision === v1);
    const revisions = [...s.cluster.revisions.values()].sort((a, b) => a.revision - b.revision);
    expect(revisions.map((r) => [r.metadata.name, r.revision])).toEqual([
      [v2, 2],
      [v1, 3],
    ]);
    expect(s.violations).toEqual([]);
  });
});

describe('OrderedReady', () => {
  it('scales down one pod at a time, waiting for each to terminate', async () => {
    const s = await converged({ replicas: 5, podManagementPolicy: 'OrderedReady' }, { terminateTicks: 3 });
    s.edit({ replicas: 1 });
    let maxTerminating = 0;
    await s.runUntil((x) => {
      maxTerminating = Math.max(maxTerminating, x.pods().filter((p) => p.metadata.deletionTimestamp).length);
      return x.converged();
    });
    expect(maxTerminating).toBe(1);
    expect(s.cluster.podDeletions).toEqual(['web-4', 'web-3', 'web-2', 'web-1']);
  });
});

describe('Parallel', () => {
  it('scales down all condemned pods at once', async () => {
    const s = await converged({ replicas: 5, podManagementPolicy: 'Parallel' });
    s.edit({ replicas: 1 });
    await s.step();
    expect(s.cluster.podDeletions).toEqual(['web-4', 'web-3', 'web-2', 'web-1']);
  });
});

describe('revision history', () => {
  it('keeps at most revisionHistoryLimit old revisions, never the live ones', async () => {
    const s = await converged({ replicas: 1, revisionHistoryLimit: 2 });
    for (const tag of ['v2', 'v3', 'v4', 'v5']) {
      s.edit(image(tag));
      await s.runUntil((x) => x.converged() && x.pods()[0]?.spec?.['containers'] !== undefined && JSON.stringify(x.pods()[0]?.spec).includes(tag));
    }
    await s.step();
    const names = [...s.cluster.revisions.values()].map((r) => r.revision).sort();
    expect(names).toEqual([3, 4, 5]);
    expect(s.violations).toEqual([]);
  });
});

describe('the scenario harness', () => {
  // The App allows 3 unavailable; the harness is armed with 1, so the rollout breaches the armed limit.
  const heldTighter = async () => {
    const s = await converged({
      replicas: 4,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 3 } },
    });
    s.arm({ maxUnavailable: 1 });
    s.edit(image('v2'));
    return s;
  };
  const done = (x: Scenario) => x.converged() && x.app().metadata.generation === 2;

  it('fails the step of the first breach, naming the invariant, the step and the pods', async () => {
    const s = await heldTighter();
    const stepsBefore = s.steps;
    await expect(s.runUntil(done)).rejects.toThrow(
      new RegExp(`^invariant 'maxUnavailable' breached at step ${stepsBefore + 1} \\(pod web-\\d[^)]*\\): \\d unavailable > maxUnavailable 1`),
    );
    expect(s.breaches.breaches).toHaveLength(1);
  });

  it('with the invariant allowed by name, records every breach and carries on', async () => {
    const s = (await heldTighter()).allowInvariantBreaches(['maxUnavailable'], 'armed tighter than the spec on purpose');
    await s.runUntil(done);
    expect(s.violations.length).toBeGreaterThan(0);
    expect(s.violations.every((v) => v.includes('> maxUnavailable 1'))).toBe(true);
  });

  it('an opt-out covers only the invariants it names', async () => {
    const s = (await heldTighter()).allowInvariantBreaches(['partition'], 'a partition breach would be expected here');
    await expect(s.runUntil(done)).rejects.toThrow(/invariant 'maxUnavailable' breached/);
  });

  it('notices an ordered creation ahead of an unready predecessor, and fails the next step on it', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy: 'OrderedReady' });
    await s.step();
    const pod = s.cluster.pods.get(`${NS}/web-0`)!;
    await s.cluster.client().pods.create(NS, { ...pod, metadata: { ...pod.metadata, name: 'web-1', uid: undefined } });
    expect(s.violations).toEqual(['created web-1 while web-0 is not available']);
    await expect(s.step()).rejects.toThrow("invariant 'ordering' breached at step 2 (pod web-1): created web-1 while web-0 is not available");
  });
});
