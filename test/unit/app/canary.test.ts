/** Scenario tests: canary steps walked end to end, in both pod management policies. */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { Scenario } from './scenario.ts';

const policies = ['OrderedReady', 'Parallel'] as const;
const image = (tag: string) => ({ template: { spec: { containers: [{ name: 'main', image: `registry.example/web:${tag}` }] } } });
const steps = [{ replicas: 1 }, { pause: {} }, { replicas: '50%' }, { pause: { duration: '5s' } }];

describe.each(policies)('%s', (podManagementPolicy) => {
  it('walks [1, pause{}, 50%, pause{5s}] to the end', async () => {
    const s = new Scenario({ replicas: 4, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps } } } });
    await s.runUntil((x) => x.converged());
    expect(s.app().status?.canary).toEqual({ step: 4 });
    const v1 = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 1 });
    s.edit(image('v2'));

    // Step 0 then the pause {}: one pod updated, spec paused by ebb, status records the step.
    await s.runUntil((x) => x.app().spec.updateStrategy?.rollingUpdate?.paused === true);
    const v2 = s.app().status!.updateRevision!;
    for (let i = 0; i < 8; i++) await s.step();
    expect(s.revisionCounts()).toEqual({ [v1]: 3, [v2]: 1 });
    expect(s.pods().find((p) => p.metadata.labels?.['apps.ebb.dev/revision'] === v2)?.metadata.name).toBe('web-3');
    const paused = s.app().status!;
    expect(paused.canary?.step).toBe(1);
    expect(paused.canary?.pausedAt).toMatch(/^\d{4}-/);
    expect(paused.conditions?.find((c) => c.type === ConditionType.paused)).toMatchObject({ status: 'True', reason: 'CanaryPause' });
    expect(paused.conditions?.find((c) => c.type === ConditionType.progressing)).toMatchObject({ status: 'True', reason: 'CanaryStep' });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.canaryPaused)).toHaveLength(1);

    // Resume: 50% = 2 pods, then a timed pause that returns a wait.
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.app().status?.canary?.step === 3);
    expect(s.revisionCounts()).toEqual({ [v1]: 2, [v2]: 2 });
    const p = await s.reconcile();
    expect(p?.wait).toMatchObject({ reason: 'canary-pause' });
    expect(p!.wait!.afterMs).toBeGreaterThan(0);
    expect(p!.wait!.afterMs).toBeLessThanOrEqual(5000);
    expect(s.app().status?.conditions?.find((c) => c.type === ConditionType.paused)).toMatchObject({ status: 'True', reason: 'CanaryTimedPause' });

    // After the duration the rollout completes.
    await s.runUntil((x) => x.converged() && x.app().status?.currentRevision === v2);
    expect(s.app().status?.canary).toEqual({ step: 4 });
    expect(s.violations).toEqual([]);
  });
});

describe('canary', () => {
  it('restarts the steps when a new revision arrives mid-canary', async () => {
    const s = new Scenario({
      replicas: 4,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps: [{ replicas: 2 }, { pause: { duration: '1h' } }] } } },
    });
    await s.runUntil((x) => x.converged());
    s.edit(image('v2'));
    await s.runUntil((x) => x.app().status?.canary?.step === 1);
    const v2 = s.app().status!.updateRevision!;
    expect(s.revisionCounts()[v2]).toBe(2);
    s.edit(image('v3'));
    await s.step();
    const status = s.app().status!;
    expect(status.updateRevision).not.toBe(v2);
    expect(status.canary?.step).toBe(0);
    await s.runUntil((x) => x.app().status?.canary?.step === 1);
    expect(s.revisionCounts()[s.app().status!.updateRevision!]).toBe(2);
  });

  it('a user pause during a replicas step holds it; scaling still happens', async () => {
    const s = new Scenario({
      replicas: 3,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true, canary: { steps: [{ replicas: 1 }] } } },
    });
    await s.runUntil((x) => x.converged());
    s.edit(image('v2'));
    for (let i = 0; i < 6; i++) await s.step();
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.app().status?.canary).toEqual({ step: 0 });
    expect(s.violations).toEqual([]);
  });
});
