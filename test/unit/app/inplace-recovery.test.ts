/**
 * In-place updates through the App planner when things go wrong: a new revision while pods are mid-update,
 * workers killed mid-plan, apiserver errors, a gate left unset. Invariants are checked after every step.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Annotation, ConditionType, EventReason } from '../../../src/api/keys.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import type { Pod } from '../../../src/kube/types.ts';
import type { Plan } from '../../../src/workers/app/model/plan.ts';
import { IN_PLACE_GATE } from '../../../src/workers/inplace/index.ts';
import { Scenario } from './scenario.ts';

type Container = { name: string; image: string; [k: string]: unknown };
const web = (tag: string, extra: Partial<Container> = {}): Container => ({ name: 'main', image: `registry.example/web:${tag}`, ...extra });
const template = (containers: Container[], annotations?: Record<string, string>) => ({
  template: { metadata: { labels: { app: 'web' }, ...(annotations ? { annotations } : {}) }, spec: { containers } },
});
const inPlace = (spec: Partial<AppSpec>, rollingUpdate: Record<string, unknown> = {}): Partial<AppSpec> => ({
  ...spec,
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', ...rollingUpdate } },
});

const images = (p: Pod): string[] => ((p.spec?.['containers'] ?? []) as Container[]).map((c) => c.image);
const gate = (p: Pod) => p.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
const annotated = (p: Pod): boolean => p.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined;

async function converged(spec: Partial<AppSpec>): Promise<Scenario> {
  const s = new Scenario(spec, { restartTicks: 2 });
  await s.runUntil((x) => x.converged());
  return s;
}

/** Every pod runs `tag`, no update is left under way, every gate is True. */
function settledAt(s: Scenario, tag: string): boolean {
  return s.converged() && s.pods().every((p) => images(p).every((i) => i.endsWith(`:${tag}`)) && !annotated(p) && gate(p)?.status === 'True');
}

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('a new revision while pods are mid-update', () => {
  it.each(['OrderedReady', 'Parallel'] as const)('%s: v2 under way, then v3: every pod ends at v3 in place', async (podManagementPolicy) => {
    const s = await converged(inPlace({ replicas: 3, podManagementPolicy }, { maxUnavailable: 2 }));
    s.arm({ maxUnavailable: 2 });
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.pods().some((p) => annotated(p) && images(p)[0]?.endsWith(':v2') === true));
    s.edit(template([web('v3')]));
    await s.runUntil((x) => settledAt(x, 'v3'));
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
  });

  it('a rollback to v1 while a pod is mid-update to v2 brings it back in place', async () => {
    const s = await converged(inPlace({ replicas: 2 }, { inPlaceUpdateStrategy: { gracePeriodSeconds: 3 } }));
    const v1 = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.pods().some(annotated));
    s.edit(template([web('v1')]));
    await s.runUntil((x) => x.app().status?.updateRevision === v1 && settledAt(x, 'v1'));
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
  });

  it('paused, then a new revision: the pod mid-update goes back to its revision, nothing starts until resumed', async () => {
    const s = await converged(inPlace({ replicas: 2 }, { inPlaceUpdateStrategy: { gracePeriodSeconds: 3 } }));
    s.arm({ maxUnavailable: 1 });
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.pods().some(annotated));
    s.edit({ updateStrategy: { rollingUpdate: { paused: true } }, ...template([web('v3')]) });
    await s.runUntil(
      (x) =>
        x.pods().every((p) => !annotated(p) && gate(p)?.status === 'True' && images(p)[0]?.endsWith(':v1') === true) && x.app().status?.readyReplicas === 2,
    );
    for (let i = 0; i < 5; i++) await s.step();
    expect(s.pods().every((p) => !annotated(p) && images(p)[0]?.endsWith(':v1') === true)).toBe(true);
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => settledAt(x, 'v3'));
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
  });

  it('a change that cannot go in place recreates the pod that is mid-update', async () => {
    const s = await converged(inPlace({ replicas: 2 }));
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.pods().some((p) => annotated(p) && images(p)[0]?.endsWith(':v2') === true));
    const mid = s.pods().find(annotated)!.metadata.name;
    s.edit(template([web('v3', { env: [{ name: 'A', value: '1' }] })]));
    await s.runUntil((x) => settledAt(x, 'v3'));
    expect(s.cluster.podDeletions[0]).toBe(mid);
    expect(s.cluster.events.some((e) => e.event.reason === EventReason.inPlaceFallback)).toBe(true);
  });
});

describe('multi-container pods', () => {
  it('updates containers in batches by launch priority, highest first', async () => {
    const containers = (tag: string) => [web(tag), { name: 'proxy', image: `registry.example/proxy:${tag}` }];
    const s = await converged(inPlace({ replicas: 1, ...template(containers('v1'), { [Annotation.containerPriority]: '{"proxy": 10}' }) }));
    s.edit(template(containers('v2'), { [Annotation.containerPriority]: '{"proxy": 10}' }));
    const order: string[] = [];
    await s.runUntil((x) => {
      const p = x.pods()[0]!;
      for (const [i, name] of ['main', 'proxy'].entries()) if (images(p)[i]?.endsWith(':v2') && !order.includes(name)) order.push(name);
      return settledAt(x, 'v2');
    });
    expect(order).toEqual(['proxy', 'main']);
  });
});

describe('workers killed and apiserver errors', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %d: plans cut short at random, errors injected: converges, nothing left updating', async (seed) => {
    const rnd = random(seed);
    const s = await converged(
      inPlace(
        { replicas: 4, podManagementPolicy: seed % 2 ? 'Parallel' : 'OrderedReady' },
        { maxUnavailable: 2, inPlaceUpdateStrategy: { gracePeriodSeconds: seed % 3 } },
      ),
    );
    s.arm({ maxUnavailable: 2 });
    s.tolerateErrors = true;
    // A worker killed mid-plan performs only a prefix of it (and writes no status).
    s.interfere = (p: Plan) =>
      rnd() < 0.3 ? { ...p, actions: p.actions.slice(0, Math.floor(rnd() * p.actions.length)), status: s.app().status ?? p.status } : p;
    for (const op of ['pods.patchStatus', 'pods.patchSpec'])
      s.cluster.calls.failNth(op, 1 + Math.floor(rnd() * 6), new KubeError('ServerError', 500, `${op}: etcd timeout`));
    s.edit(template([web('v2')]));
    await s.runUntil((x) => settledAt(x, 'v2'), 400);
    s.interfere = undefined;
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.violations).toEqual([]);
  });

  it('a failed in-place write sets FailedUpdatePod and an Event; the retry clears it', async () => {
    const s = await converged(inPlace({ replicas: 1 }));
    s.tolerateErrors = true;
    s.cluster.calls.failNth('pods.patchSpec', 1, new KubeError('ServerError', 500, 'PATCH pods: etcd timeout'));
    s.edit(template([web('v2')]));
    await s.runUntil((x) => x.errors.length === 1);
    expect(s.app().status?.conditions?.find((c) => c.type === ConditionType.failedUpdatePod)).toMatchObject({ status: 'True' });
    expect(s.cluster.events.map((e) => e.event.reason)).toContain(EventReason.failedUpdate);
    await s.runUntil((x) => settledAt(x, 'v2'));
    expect(s.app().status?.conditions?.find((c) => c.type === ConditionType.failedUpdatePod)).toMatchObject({ status: 'False' });
  });

  it('a gate the creator could not set is set by the next reconcile', async () => {
    const s = new Scenario(inPlace({ replicas: 2, podManagementPolicy: 'Parallel' }));
    s.cluster.calls.failNth('pods.patchStatus', 1, new KubeError('ServerError', 500, 'PATCH pods/status: etcd timeout'));
    await s.step();
    expect(s.pods().filter((p) => gate(p)?.status === 'True')).toHaveLength(1);
    await s.runUntil((x) => x.converged());
    expect(s.pods().every((p) => gate(p)?.status === 'True')).toBe(true);
  });

  it('pods created under ReCreate have no gate; under an in-place policy they get it, True', async () => {
    const plain = await converged({ replicas: 1 });
    expect(plain.pods()[0]?.spec?.readinessGates).toBeUndefined();
    const gated = await converged(inPlace({ replicas: 1 }));
    expect(gated.pods()[0]?.spec?.readinessGates).toEqual([{ conditionType: IN_PLACE_GATE }]);
    expect(gate(gated.pods()[0]!)).toMatchObject({ status: 'True', reason: 'PodCreated' });
  });
});
