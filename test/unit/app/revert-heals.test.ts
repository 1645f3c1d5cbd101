/**
 * Scenario tests: a revert heals by itself. After an update to an image that crashes, putting the template back
 * replaces (or updates in place) the broken pods without waiting for them to become ready and without counting
 * them against maxUnavailable, in both pod management policies and both update policies. Pods below the
 * partition are never touched, a paused rollout heals nothing until resumed, and healthy outdated pods still
 * wait their turn under maxUnavailable. Invariants are checked after every step.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { getPodRevision, isRunningAndAvailable } from '../../../src/workers/app/pods/predicates.ts';
import { LIFECYCLE_STATE_LABEL } from '../../../src/api/keys.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const GOOD = 'registry.example/web:v1';
const BAD = 'registry.example/crashloop:v2';
const NONE = /$^/;
const CRASHING = /crashloop/;
const image = (ref: string) => ({ template: { spec: { containers: [{ name: 'main', image: ref }] } } });
const images = (p: Pod): string[] => ((p.spec?.['containers'] ?? []) as { image: string }[]).map((c) => c.image);
const policies = ['OrderedReady', 'Parallel'] as const;
const updatePolicies = ['ReCreate', 'InPlaceIfPossible'] as const;

function spec(podManagementPolicy: (typeof policies)[number], rollingUpdate: Record<string, unknown>): Partial<AppSpec> {
  return { replicas: 3, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate } };
}

async function converged(spec: Partial<AppSpec>, neverReady: RegExp): Promise<Scenario> {
  const s = new Scenario(spec, { restartTicks: 2, neverReady });
  await s.runUntil((x) => x.converged());
  return s;
}

/** Every pod runs the good image, is available, and the status says the rollout is complete. */
const healed = (s: Scenario, good: string): boolean =>
  s.app().status?.updateRevision === good && s.converged() && s.pods().every((p) => images(p).every((i) => i === GOOD));

/** Pods at `revision` that are not available. */
const broken = (s: Scenario, revision: string): Pod[] => s.pods().filter((p) => getPodRevision(p) === revision && !isRunningAndAvailable(p, 0, s.clock.now()));

const uid = (s: Scenario, ordinal: number): string | undefined => s.cluster.pods.get(`${NS}/web-${ordinal}`)?.metadata.uid;

describe.each(policies)('%s', (podManagementPolicy) => {
  it.each(updatePolicies)('%s: reverting an update whose pods never become ready heals every pod', async (podUpdatePolicy) => {
    const s = await converged(spec(podManagementPolicy, { podUpdatePolicy, maxUnavailable: 2 }), CRASHING);
    const good = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 2 });
    s.edit(image(BAD));
    await s.runUntil((x) => x.app().status!.updateRevision !== good && broken(x, x.app().status!.updateRevision!).length >= 1);
    const bad = s.app().status!.updateRevision!;
    for (let i = 0; i < 10; i++) await s.step();
    expect(broken(s, bad).length).toBeGreaterThanOrEqual(1);
    s.edit(image(GOOD));
    await s.runUntil((x) => healed(x, good), 60);
    expect(s.violations).toEqual([]);
    expect(s.app().status).toMatchObject({ currentRevision: good, updatedReplicas: 3, readyReplicas: 3 });
  });

  it.each(updatePolicies)(
    '%s: pods of the stable revision that crash-loop beyond maxUnavailable are not healed: the rollout waits, as upstream',
    async (podUpdatePolicy) => {
      const s = await converged(spec(podManagementPolicy, { podUpdatePolicy, maxUnavailable: 1 }), NONE);
      s.edit(image(BAD));
      await s.runUntil((x) => x.converged() && x.pods().every((p) => images(p).every((i) => i === BAD)));
      const bad = s.app().status!.updateRevision!;
      // The bad image crashes after its rollout completed: it is the stable revision now, not a stuck rollout.
      s.kubelet.opts.neverReady = CRASHING;
      s.kubelet.crash(NS, 'web-1');
      s.kubelet.crash(NS, 'web-2');
      await s.runUntil((x) => broken(x, bad).length === 2);
      s.arm({ maxUnavailable: 1 });
      const uids = [0, 1, 2].map((o) => uid(s, o));
      s.edit(image(GOOD));
      await s.runUntil((x) => x.app().status?.updateRevision !== bad, 5);
      for (let i = 0; i < 20; i++) await s.step();
      expect([0, 1, 2].map((o) => uid(s, o))).toEqual(uids);
      expect(s.pods().every((p) => getPodRevision(p) === bad && p.metadata.deletionTimestamp === undefined)).toBe(true);
      expect(s.violations).toEqual([]);
    },
  );

  it('pods below the partition are never healed, even unavailable and outdated', async () => {
    const s = await converged(spec(podManagementPolicy, { partition: 2, maxUnavailable: 2 }), NONE);
    s.edit(image('registry.example/web:v2'));
    await s.runUntil((x) => x.app().status?.updatedReplicas === 1 && x.app().status?.readyReplicas === 3);
    s.arm({ maxUnavailable: 2, partition: 2 });
    // web-0 (below the partition, at the old revision) crash-loops.
    s.kubelet.opts.neverReady = /web:v1/;
    s.kubelet.crash(NS, 'web-0');
    const kept = uid(s, 0);
    for (let i = 0; i < 15; i++) await s.step();
    expect(uid(s, 0)).toBe(kept);
    expect(s.cluster.podDeletions).not.toContain('web-0');
    expect(s.violations).toEqual([]);
  });

  it('with canary steps: the broken canary heals when the template is put back', async () => {
    const canary = { steps: [{ replicas: 1 }, { pause: {} }] };
    const s = await converged(spec(podManagementPolicy, { maxUnavailable: 1, canary }), CRASHING);
    const good = s.app().status!.updateRevision!;
    s.edit(image(BAD));
    await s.runUntil((x) => x.app().status!.updateRevision !== good && broken(x, x.app().status!.updateRevision!).length === 1);
    s.edit(image(GOOD));
    await s.runUntil((x) => healed(x, good), 60);
    expect(s.violations).toEqual([]);
  });

  it('a paused rollout heals nothing; resumed, it heals', async () => {
    const s = await converged(spec(podManagementPolicy, { maxUnavailable: 2 }), CRASHING);
    const good = s.app().status!.updateRevision!;
    s.edit(image(BAD));
    await s.runUntil((x) => x.app().status!.updateRevision !== good && broken(x, x.app().status!.updateRevision!).length >= 1);
    const bad = s.app().status!.updateRevision!;
    s.edit({ ...image(GOOD), updateStrategy: { rollingUpdate: { paused: true } } });
    const stuck = broken(s, bad).map((p) => p.metadata.uid);
    for (let i = 0; i < 10; i++) await s.step();
    expect(broken(s, bad).map((p) => p.metadata.uid)).toEqual(stuck);
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => healed(x, good), 60);
    expect(s.violations).toEqual([]);
  });
});

describe('a revert healing goes through the lifecycle hooks', () => {
  const TRAFFIC = 'traffic.example/serving';
  const labelled = (ref: string) => ({
    template: { metadata: { labels: { app: 'web', [TRAFFIC]: 'yes' } }, spec: { containers: [{ name: 'main', image: ref }] } },
  });
  const stateOf = (p: Pod | undefined): string | undefined => p?.metadata.labels?.[LIFECYCLE_STATE_LABEL];
  /** What a traffic manager does once it has drained a pod asked to prepare for deletion: removes its label. */
  const drain = async (s: Scenario): Promise<void> => {
    for (const p of s.pods())
      if (stateOf(p) === 'PreparingDelete' && p.metadata.labels?.[TRAFFIC] === 'yes')
        await s.cluster.client().pods.patch(NS, p.metadata.name ?? '', { metadata: { labels: { [TRAFFIC]: null } } });
  };

  it.each(policies)('%s: the broken pod waits on preDelete before it is replaced', async (podManagementPolicy) => {
    const s = await converged(
      { ...spec(podManagementPolicy, { maxUnavailable: 1 }), ...labelled(GOOD), lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' } } } },
      CRASHING,
    );
    const good = s.app().status!.updateRevision!;
    s.edit(labelled(BAD));
    // The traffic manager drains every pod the bad rollout asks for, until a pod runs the bad image, broken.
    for (let i = 0; i < 60; i++) {
      const rev = s.app().status!.updateRevision!;
      if (rev !== good && broken(s, rev).some((p) => p.metadata.labels?.[TRAFFIC] === 'yes')) break;
      await drain(s);
      await s.step();
    }
    const [victim] = broken(s, s.app().status!.updateRevision!);
    const name = victim?.metadata.name ?? '';
    expect(victim?.metadata.labels?.[TRAFFIC]).toBe('yes');
    s.edit(labelled(GOOD));
    await s.runUntil((x) => stateOf(x.cluster.pods.get(`${NS}/${name}`)) === 'PreparingDelete', 10);
    // Held by the hook while its label is on: not deleted, whatever the steps.
    const deletions = s.cluster.podDeletions.length;
    for (let i = 0; i < 5; i++) await s.step();
    expect(s.cluster.podDeletions.length).toBe(deletions);
    expect(s.cluster.pods.get(`${NS}/${name}`)?.metadata.uid).toBe(victim?.metadata.uid);
    for (let i = 0; i < 80 && !healed(s, good); i++) {
      await drain(s);
      await s.step();
    }
    expect(healed(s, good)).toBe(true);
    expect(s.violations).toEqual([]);
  });
});
