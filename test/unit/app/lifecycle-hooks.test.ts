/**
 * Scenario tests: lifecycle hooks through whole rollouts on the in-memory cluster and kubelet, with a traffic
 * manager that removes a pod's handler label only some steps after the pod asked for it. No pod is deleted or
 * updated in place while it still carries the label, maxUnavailable holds, and every pod ends Normal.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { LIFECYCLE_STATE_LABEL } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const TRAFFIC = 'traffic.example/serving';
const REGISTER = 'traffic.example/register';
const template = (tag: string) => ({
  metadata: { labels: { app: 'web', [TRAFFIC]: 'yes' } },
  spec: { containers: [{ name: 'main', image: `registry.example/web:${tag}` }] },
});
const stateOf = (p: Pod): string | undefined => p.metadata.labels?.[LIFECYCLE_STATE_LABEL];

/** Answers each waiting pod after `delay` steps: removes the label it waits on (and puts serving back after preNormal). */
class TrafficManager {
  private asked = new Map<string, number>();
  private readonly s: Scenario;
  private readonly delay: number;
  constructor(s: Scenario, delay: number) {
    this.s = s;
    this.delay = delay;
  }

  async answer(step: number): Promise<void> {
    for (const pod of this.s.pods()) {
      const name = pod.metadata.name ?? '';
      const state = stateOf(pod);
      const key = `${name}/${pod.metadata.uid ?? ''}/${state ?? ''}`;
      if (state !== 'PreparingDelete' && state !== 'PreparingUpdate' && state !== 'PreparingNormal') continue;
      const since = this.asked.get(key) ?? step;
      this.asked.set(key, since);
      if (step - since < this.delay) continue;
      const labels = state === 'PreparingNormal' ? { [REGISTER]: null, [TRAFFIC]: 'yes' } : { [TRAFFIC]: null };
      await this.s.cluster.client().pods.patch(NS, name, { metadata: { labels } });
    }
  }
}

async function rollout(spec: Partial<AppSpec>, check: (s: Scenario) => void): Promise<{ s: Scenario }> {
  const s = new Scenario({ replicas: 3, template: template('v1'), ...spec }, { terminateTicks: 1, startTicks: 1 });
  const tm = new TrafficManager(s, 3);
  let step = 0;
  const run = async (done: (x: Scenario) => boolean) => {
    for (let i = 0; i < 300; i++) {
      await s.step();
      await tm.answer(++step);
      check(s);
      if (done(s)) return;
    }
    throw new Error(
      `no convergence; pods ${s
        .pods()
        .map((p) => `${p.metadata.name ?? ''}:${stateOf(p) ?? '-'}`)
        .join(' ')}`,
    );
  };
  await run((x) => x.converged() && x.pods().every((p) => stateOf(p) === 'Normal'));
  const v1 = s.app().status?.updateRevision;
  s.arm({ maxUnavailable: 1 });
  s.edit({ template: template('v2') });
  await run((x) => x.converged() && x.app().status?.updateRevision !== v1 && x.pods().every((p) => stateOf(p) === 'Normal'));
  return { s };
}

describe.each(['OrderedReady', 'Parallel'] as const)('lifecycle hooks, %s', (podManagementPolicy) => {
  it('recreation waits on preDelete for every pod, one at a time', async () => {
    // The traffic manager acts between steps only: the labels before a step are the ones the reconcile read.
    let labelled = new Set<string>();
    let deletions = 0;
    const deletedWhileHeld: string[] = [];
    const { s } = await rollout({ podManagementPolicy, lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' }, markPodNotReady: true } } }, (x) => {
      for (const name of x.cluster.podDeletions.slice(deletions)) if (labelled.has(name)) deletedWhileHeld.push(name);
      deletions = x.cluster.podDeletions.length;
      labelled = new Set(x.pods().flatMap((p) => (p.metadata.labels?.[TRAFFIC] === 'yes' ? [p.metadata.name ?? ''] : [])));
    });
    expect(deletedWhileHeld).toEqual([]);
    expect(s.violations).toEqual([]);
    expect(s.cluster.podDeletions).toEqual(['web-2', 'web-1', 'web-0']);
  });

  it('in place waits on inPlaceUpdate and returns through preNormal; pods keep their identity', async () => {
    const imageOf = (p: Pod): string | undefined => (p.spec?.['containers'] as { image: string }[] | undefined)?.[0]?.image;
    // Image and serving label per pod before each step (the traffic manager acts between steps).
    let before = new Map<string, { image: string | undefined; serving: boolean }>();
    const imagesWhileHeld: string[] = [];
    const { s } = await rollout(
      {
        podManagementPolicy,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
        lifecycle: { inPlaceUpdate: { labelsHandler: { [TRAFFIC]: 'yes' } }, preNormal: { labelsHandler: { [REGISTER]: 'pending' } } },
      },
      (x) => {
        for (const p of x.pods()) {
          const was = before.get(p.metadata.uid ?? '');
          if (was?.serving === true && was.image !== imageOf(p)) imagesWhileHeld.push(p.metadata.name ?? '');
        }
        before = new Map(x.pods().map((p) => [p.metadata.uid ?? '', { image: imageOf(p), serving: p.metadata.labels?.[TRAFFIC] === 'yes' }]));
      },
    );
    expect(imagesWhileHeld).toEqual([]);
    expect(s.violations).toEqual([]);
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.pods().every((p) => p.metadata.labels?.[REGISTER] === undefined && p.metadata.labels?.[TRAFFIC] === 'yes')).toBe(true);
  });
});
