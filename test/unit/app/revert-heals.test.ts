/**
 * Scenario tests: a revert heals by itself. After an update to an image that never becomes ready, putting the
 * template back replaces (or updates in place) the broken pods without waiting for them to become ready and
 * without counting them against maxUnavailable, in both pod management policies and both update policies;
 * pods below the partition are never touched, and healthy outdated pods still wait their turn.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { getPodRevision, isRunningAndAvailable } from '../../../src/workers/app/pods/predicates.ts';
import { Scenario } from './scenario.ts';

const image = (ref: string) => ({ template: { spec: { containers: [{ name: 'main', image: ref }] } } });
const GOOD = 'registry.example/web:v1';
const BAD = 'registry.example/crashloop:v2';
const images = (p: Pod): string[] => ((p.spec?.['containers'] ?? []) as { image: string }[]).map((c) => c.image);

function spec(podManagementPolicy: 'OrderedReady' | 'Parallel', rollingUpdate: Record<string, unknown>): Partial<AppSpec> {
  return { replicas: 3, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate } };
}

async function converged(s: Scenario): Promise<Scenario> {
  await s.runUntil((x) => x.converged());
  return s;
}

/** Every pod runs the good image, is available, and the status says the rollout is complete. */
function healed(s: Scenario): boolean {
  return s.converged() && s.pods().every((p) => images(p).every((i) => i === GOOD));
}

const broken = (s: Scenario, bad: string): Pod[] => s.pods().filter((p) => getPodRevision(p) === bad && !isRunningAndAvailable(p, 0, s.clock.now()));

describe.each(['OrderedReady', 'Parallel'] as const)('%s', (podManagementPolicy) => {
  it.each(['ReCreate', 'InPlaceIfPossible'] as const)('%s: reverting a crash-looping update heals every pod', async (podUpdatePolicy) => {
    const s = await converged(new Scenario(spec(podManagementPolicy, { podUpdatePolicy, maxUnavailable: 2 }), { restartTicks: 2 }));
    const good = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 2 });
    s.edit(image(BAD));
    await s.runUntil((x) => x.app().status!.updateRevision !== good && broken(x, x.app().status!.updateRevision!).length >= 1);
    const bad = s.app().status!.updateRevision!;
    // The broken pods stay broken: without the revert nothing moves on.
    for (let i = 0; i < 10; i++) await s.step();
    expect(broken(s, bad).length).toBeGreaterThanOrEqual(1);
    s.edit(image(GOOD));
    await s.runUntil((x) => x.app().status?.updateRevision === good && healed(x), 60);
    expect(s.violations).toEqual([]);
    expect(s.app().status).toMatchObject({ currentRevision: good, updatedReplicas: 3, readyReplicas: 3 });
  });
});
