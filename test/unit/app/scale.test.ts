/** Scenario tests: creating and scaling Apps, in both pod management policies, with invariants after every step. */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason, Label } from '../../../src/api/keys.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const policies = ['OrderedReady', 'Parallel'] as const;

describe.each(policies)('%s', (podManagementPolicy) => {
  it('creates every replica with its identity and reports status', async () => {
    const s = new Scenario({ replicas: 5, podManagementPolicy });
    await s.runUntil((x) => x.converged());
    expect(s.violations).toEqual([]);
    const pods = s.pods();
    expect(pods.map((p) => p.metadata.name)).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
    const status = s.app().status!;
    for (const [i, p] of pods.entries()) {
      expect(p.spec?.hostname).toBe(`web-${i}`);
      expect(p.spec?.subdomain).toBe('web');
      expect(p.metadata.labels).toMatchObject({
        app: 'web',
        [Label.app]: 'web',
        [Label.podIndex]: String(i),
        [Label.podName]: `web-${i}`,
        [Label.revision]: status.updateRevision,
      });
      expect(p.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', name: 'web', controller: true, blockOwnerDeletion: true })]);
    }
    expect(status).toMatchObject({
      replicas: 5,
      readyReplicas: 5,
      availableReplicas: 5,
      currentReplicas: 5,
      updatedReplicas: 5,
      updatedReadyReplicas: 5,
      labelSelector: 'app=web',
      collisionCount: 0,
    });
    expect(status.conditions?.find((c) => c.type === ConditionType.progressing)).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.successfulCreate)).toHaveLength(5);
  });

  it('scales down from the highest ordinal and up again', async () => {
    const s = new Scenario({ replicas: 5, podManagementPolicy });
    await s.runUntil((x) => x.converged());
    s.edit({ replicas: 2 });
    await s.runUntil((x) => x.converged());
    expect(s.cluster.podDeletions).toEqual(['web-4', 'web-3', 'web-2']);
    s.edit({ replicas: 7 });
    await s.runUntil((x) => x.converged());
    expect(s.pods().map((p) => p.metadata.name)).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4', 'web-5', 'web-6']);
    expect(s.violations).toEqual([]);
  });

  it('numbers pods from ordinals.start', async () => {
    const s = new Scenario({ replicas: 2, podManagementPolicy, ordinals: { start: 5 } });
    await s.runUntil((x) => x.converged());
    expect(s.pods().map((p) => p.metadata.name)).toEqual(['web-5', 'web-6']);
    expect(s.violations).toEqual([]);
  });

  it('replaces a failed pod', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy });
    await s.runUntil((x) => x.converged());
    const old = s.cluster.pods.get(`${NS}/web-1`)!.metadata.uid;
    s.kubelet.fail(NS, 'web-1');
    await s.runUntil((x) => x.converged() && x.cluster.pods.get(`${NS}/web-1`)!.metadata.uid !== old);
    expect(s.cluster.events.some((e) => e.event.reason === EventReason.recreatingFailedPod)).toBe(true);
    expect(s.violations).toEqual([]);
  });
});

describe('OrderedReady', () => {
  it('creates one pod at a time, each after its predecessor is available', async () => {
    const s = new Scenario({ replicas: 4, podManagementPolicy: 'OrderedReady', minReadySeconds: 3 }, { startTicks: 2 });
    const counts: number[] = [];
    await s.runUntil((x) => {
      counts.push(x.pods().length);
      return x.converged();
    });
    // Never two pods created in one step.
    for (let i = 1; i < counts.length; i++) expect((counts[i] ?? 0) - (counts[i - 1] ?? 0)).toBeLessThanOrEqual(1);
    expect(s.violations).toEqual([]);
  });

  it('asks to be woken when minReadySeconds will have passed', async () => {
    const s = new Scenario({ replicas: 2, podManagementPolicy: 'OrderedReady', minReadySeconds: 30 });
    await s.step();
    await s.step();
    await s.step();
    const p = await s.reconcile();
    expect(p?.wait).toMatchObject({ reason: 'min-ready-seconds' });
    expect(p!.wait!.afterMs).toBeGreaterThan(0);
    expect(p!.wait!.afterMs).toBeLessThanOrEqual(30_000);
  });
});

describe('Parallel', () => {
  it('creates all pods in the first reconcile', async () => {
    const s = new Scenario({ replicas: 4, podManagementPolicy: 'Parallel' });
    await s.step();
    expect(s.pods()).toHaveLength(4);
  });
});
