/**
 * Scenario tests of releasing: a pod the App controls whose labels leave the selector loses its controller
 * reference, and its ordinal is created anew once the released pod is gone.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const condition = (s: Scenario, type: string) => s.app().status?.conditions?.find((c) => c.type === type);

function relabel(s: Scenario, name: string, labels: Record<string, string>): Pod {
  const key = `${NS}/${name}`;
  const pod = s.cluster.pods.get(key);
  if (!pod) throw new Error(`no pod ${name}`);
  const next = {
    ...pod,
    metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, ...labels }, resourceVersion: `${pod.metadata.resourceVersion}-relabelled` },
  };
  s.cluster.pods.set(key, next);
  return next;
}

describe('a pod that leaves the selector', () => {
  it('is released (controller reference removed, Event), its name held until it is deleted, then its ordinal is created anew', async () => {
    const s = new Scenario({ replicas: 2 });
    await s.runUntil((x) => x.converged());
    const relabelled = relabel(s, 'web-1', { app: 'elsewhere' });
    const uid = s.app().metadata.uid;

    await expect(s.reconcile()).rejects.toMatchObject({ code: 'PodNameTaken' });
    const released = s.cluster.pods.get(`${NS}/web-1`);
    expect(released?.metadata.uid).toBe(relabelled.metadata.uid);
    expect(released?.metadata.ownerReferences?.some((r) => r.uid === uid)).toBe(false);
    expect(s.cluster.events.map((e) => e.event.reason)).toEqual(expect.arrayContaining([EventReason.releasedPod, EventReason.failedCreate]));
    expect(condition(s, ConditionType.failedCreatePod)).toMatchObject({ status: 'True', reason: 'CreatePodRetrying' });
    expect(s.app().status?.replicas).toBe(1);

    // Released: the next attempt finds an orphan holding the name, releases nothing more and keeps failing.
    const patchesBefore = s.cluster.calls.count('pods.patch');
    await expect(s.reconcile()).rejects.toMatchObject({ code: 'PodNameTaken' });
    expect(s.cluster.calls.count('pods.patch')).toBe(patchesBefore);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.releasedPod)).toHaveLength(1);

    s.cluster.removePod(NS, 'web-1');
    await s.runUntil((x) => x.converged());
    const replacement = s.cluster.pods.get(`${NS}/web-1`);
    expect(replacement?.metadata.uid).not.toBe(relabelled.metadata.uid);
    expect(replacement?.metadata.ownerReferences?.find((r) => r.controller === true)?.uid).toBe(uid);
    expect(condition(s, ConditionType.failedCreatePod)).toMatchObject({ status: 'False' });
  });
});
