/**
 * A canary [1 replica, pause{}, 50%, pause{duration: 5s}] walked to the end on the sandbox with the real
 * watcher and worker (the timed pause is a timer in the watcher, not a sleeping worker).
 */
import { describe, expect, it } from 'vitest';
import { ConditionType } from '../../../src/api/keys.ts';
import { createApp, patchApp, revisionOf, settled, template, uniqueName, until, useController, unavailable } from './harness.ts';

const ctl = useController('app-canary');
const steps = [{ replicas: 1 }, { pause: {} }, { replicas: '50%' }, { pause: { duration: '5s' } }];

describe('canary', () => {
  it('walks [1, pause{}, 50%, pause{5s}] to the end', async () => {
    const name = uniqueName('can');
    await createApp(ctl.ns, name, {
      replicas: 4,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps } } },
    });
    const initial = await settled(ctl.ns, name);
    const v1 = initial.app.status?.updateRevision;
    expect(initial.app.status?.canary).toEqual({ step: 4 });
    let peak = 0;
    const onEach = (s: Parameters<typeof unavailable>[0]) => (peak = Math.max(peak, unavailable(s)));

    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    // Step 1 done, then pause {}: ebb sets spec paused and records the step.
    const paused = await until(
      ctl.ns,
      name,
      (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.pausedAt !== undefined && s.app.status.readyReplicas === 4,
      { onEach },
    );
    const v2 = paused.app.status?.updateRevision;
    expect(v2).not.toBe(v1);
    expect(paused.pods.map(revisionOf)).toEqual([v1, v1, v1, v2]);
    expect(paused.app.status?.canary?.step).toBe(1);
    expect(paused.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.paused, status: 'True', reason: 'CanaryPause' }));
    expect(paused.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.progressing, status: 'True', reason: 'CanaryStep' }));
    await new Promise((r) => setTimeout(r, 1000));
    const held = await until(ctl.ns, name, () => true);
    expect(held.pods.map(revisionOf)).toEqual([v1, v1, v1, v2]);

    // Resume: 50% of 4 = 2 pods, then the 5 s pause.
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    const timed = await until(ctl.ns, name, (s) => s.app.status?.canary?.step === 3, { onEach });
    // The pause is timed from the instant the worker recorded, not from when this poll happened to see it.
    const pausedAt = Date.parse(timed.app.status?.canary?.pausedAt ?? '');
    expect(pausedAt).not.toBeNaN();
    expect(timed.pods.filter((p) => revisionOf(p) === v2)).toHaveLength(2);
    expect(timed.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.paused, status: 'True', reason: 'CanaryTimedPause' }));

    // The timer fires 5 s after pausedAt and the rollout completes.
    const done = await settled(ctl.ns, name, v2);
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(5_000);
    expect(done.app.status?.canary).toEqual({ step: 4 });
    expect(done.app.status).toMatchObject({ currentRevision: v2, updatedReplicas: 4 });
    expect(done.app.spec.updateStrategy?.rollingUpdate?.paused).toBe(false);
    expect(peak).toBeLessThanOrEqual(1);
  });
});
