/**
 * Scenario tests: an aborted rollout goes back to the stable revision through the ordinary rolling update
 * (target swapped), without rewriting spec.template and without deleting a pod of the stable revision; a
 * retry starts the steps again, a promote skips them, a new template ends the abort, and the progress deadline
 * with rollbackOnProgressDeadline aborts a rollout stuck on a crashing image. Invariants hold after every step.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, EventReason, LIFECYCLE_STATE_LABEL, Reason } from '../../../src/api/keys.ts';
import { AbortReason, RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { getPodRevision } from '../../../src/workers/app/pods/predicates.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const policies = ['OrderedReady', 'Parallel'] as const;
const updatePolicies = ['ReCreate', 'InPlaceIfPossible'] as const;
const image = (ref: string) => ({ template: { spec: { containers: [{ name: 'main', image: ref }] } } });
const images = (p: Pod): string[] => ((p.spec?.['containers'] ?? []) as { image: string }[]).map((c) => c.image);
const canary = { steps: [{ replicas: 2 }, { pause: {} }, { replicas: '100%' }] };

function spec(podManagementPolicy: string, rollingUpdate: Record<string, unknown>, extra: Partial<AppSpec> = {}): Partial<AppSpec> {
  return {
    replicas: 4,
    podManagementPolicy: podManagementPolicy as AppSpec['podManagementPolicy'],
    updateStrategy: { type: 'RollingUpdate', rollingUpdate },
    ...extra,
  };
}

/** Deletes the plans made so far asked for of pods at `revision`. */
const deletesOf = (s: Scenario, revision: string): string[] =>
  s.plans.flatMap((p) => p.actions.filter((a) => a.kind === 'deletePod' && a.revision === revision).map((a) => (a.kind === 'deletePod' ? a.name : '')));

const condition = (s: Scenario, type: string) => s.app().status?.conditions?.find((c) => c.type === type);

/** A converged App at v1, then v2 rolled out to the canary pause (two pods at v2, spec paused by the step). */
async function pausedCanary(podManagementPolicy: string, podUpdatePolicy: string): Promise<{ s: Scenario; stable: string; next: string }> {
  const s = new Scenario(spec(podManagementPolicy, { podUpdatePolicy, maxUnavailable: 1, canary }));
  await s.runUntil((x) => x.converged());
  const stable = s.app().status!.updateRevision!;
  s.arm({ maxUnavailable: 1 });
  s.edit(image('registry.example/web:v2'));
  await s.runUntil((x) => x.app().status?.canary?.step === 1 && x.app().spec.updateStrategy?.rollingUpdate?.paused === true);
  const next = s.app().status!.updateRevision!;
  expect(s.revisionCounts()).toEqual({ [stable]: 2, [next]: 2 });
  return { s, stable, next };
}

/** Every pod at `revision`, available, and nothing in flight. */
const allAt = (s: Scenario, revision: string): boolean =>
  s.converged(revision) || (s.pods().length === 4 && s.pods().every((p) => getPodRevision(p) === revision) && s.app().status?.availableReplicas === 4);

describe.each(policies)('%s', (podManagementPolicy) => {
  it.each(updatePolicies)('%s: an abort during a canary pause sends the canary pods back to the stable revision', async (podUpdatePolicy) => {
    const { s, stable, next } = await pausedCanary(podManagementPolicy, podUpdatePolicy);
    const template = JSON.stringify(s.app().spec.template);
    const deletesBefore = deletesOf(s, stable).length;
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.abort]: next });
    await s.runUntil((x) => allAt(x, stable) && x.app().status?.conditions?.some((c) => c.reason === Reason.rolloutAborted) === true, 80);

    const app = s.app();
    expect(JSON.stringify(app.spec.template)).toBe(template);
    expect(app.spec.updateStrategy?.rollingUpdate?.paused).toBe(false);
    expect(app.status).toMatchObject({ currentRevision: stable, updateRevision: next, updatedReplicas: 0, currentReplicas: 4 });
    expect(app.status?.abort).toMatchObject({ revision: next, reason: AbortReason.requested });
    expect(condition(s, ConditionType.aborted)).toMatchObject({ status: 'True', reason: AbortReason.requested });
    expect(condition(s, ConditionType.progressing)).toMatchObject({ status: 'False', reason: Reason.rolloutAborted });
    expect(s.pods().every((p) => images(p).every((i) => i === 'registry.example/web:v1'))).toBe(true);
    // No pod of the stable revision was deleted by the abort; in place, no pod at all.
    expect(deletesOf(s, stable).length).toBe(deletesBefore);
    if (podUpdatePolicy === 'InPlaceIfPossible') expect(deletesOf(s, next)).toEqual([]);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutAborted)).toHaveLength(1);
    // It stays aborted: more reconciles change nothing.
    for (let i = 0; i < 5; i++) await s.step();
    expect(s.revisionCounts()).toEqual({ [stable]: 4 });
    expect(s.violations).toEqual([]);
  });
});

describe('moving on from an abort', () => {
  it('retry ends the abort and starts the steps again; promote skips the rest', async () => {
    const { s, stable, next } = await pausedCanary('Parallel', 'ReCreate');
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.abort]: next });
    await s.runUntil((x) => allAt(x, stable), 60);
    const abortedAt = s.app().status!.abort!.abortedAt;
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.abort]: null, [RolloutAnnotation.retry]: abortedAt });
    await s.runUntil((x) => x.app().status?.canary?.step === 1 && x.app().spec.updateStrategy?.rollingUpdate?.paused === true, 60);
    expect(s.app().status?.abort).toBeUndefined();
    expect(condition(s, ConditionType.aborted)).toMatchObject({ status: 'False', reason: Reason.abortRetried });
    expect(s.revisionCounts()).toEqual({ [stable]: 2, [next]: 2 });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutRetried)).toHaveLength(1);

    // Promote: the remaining steps are skipped; the pause the step set is lifted (as the CLI does).
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.promote]: next });
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => x.converged(next), 60);
    expect(s.app().status?.canary).toEqual({ step: 3 });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutPromoted)).toHaveLength(1);
    expect(s.violations).toEqual([]);
  });

  it('a new template ends the abort and rolls out as usual', async () => {
    const { s, stable, next } = await pausedCanary('OrderedReady', 'InPlaceIfPossible');
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.abort]: next });
    await s.runUntil((x) => allAt(x, stable), 60);
    s.edit({ ...image('registry.example/web:v3'), updateStrategy: { rollingUpdate: { canary: null } } });
    await s.runUntil((x) => x.app().status?.updateRevision !== next && x.converged(), 80);
    expect(s.app().status?.abort).toBeUndefined();
    expect(condition(s, ConditionType.aborted)).toMatchObject({ status: 'False', reason: Reason.newUpdateRevision });
    expect(s.pods().every((p) => images(p).every((i) => i === 'registry.example/web:v3'))).toBe(true);
    expect(s.violations).toEqual([]);
  });

  it('a person pause holds the rollback until resumed', async () => {
    const s = new Scenario(spec('Parallel', { maxUnavailable: 1, canary: { steps: [{ replicas: 1 }, { pause: { duration: '1h' } }] } }));
    await s.runUntil((x) => x.converged());
    const stable = s.app().status!.updateRevision!;
    s.edit(image('registry.example/web:v2'));
    await s.runUntil((x) => x.app().status?.canary?.step === 1);
    const next = s.app().status!.updateRevision!;
    s.edit({ updateStrategy: { rollingUpdate: { paused: true } } });
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.abort]: next });
    for (let i = 0; i < 6; i++) await s.step();
    expect(s.revisionCounts()).toEqual({ [stable]: 3, [next]: 1 });
    expect(condition(s, ConditionType.aborted)?.status).toBe('True');
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await s.runUntil((x) => allAt(x, stable), 40);
    expect(s.violations).toEqual([]);
  });
});

describe('rollbackOnProgressDeadline', () => {
  it.each(policies)('%s: a rollout stuck on a crashing image is aborted and rolled back', async (podManagementPolicy) => {
    const s = new Scenario(
      { ...spec(podManagementPolicy, { maxUnavailable: 1, rollbackOnProgressDeadline: true }), progressDeadlineSeconds: 30 },
      { neverReady: /crashloop/ },
    );
    await s.runUntil((x) => x.converged());
    const stable = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 1 });
    s.edit(image('registry.example/crashloop:v2'));
    await s.runUntil((x) => x.app().status?.updateRevision !== stable && x.pods().some((p) => images(p).includes('registry.example/crashloop:v2')));
    const bad = s.app().status!.updateRevision!;
    // Time passes without progress: the deadline aborts the rollout.
    for (let i = 0; i < 4; i++) await s.step();
    s.clock.advance(31_000);
    await s.runUntil((x) => x.app().status?.abort !== undefined, 10);
    expect(s.app().status?.abort).toMatchObject({ revision: bad, reason: AbortReason.progressDeadline });
    await s.runUntil((x) => allAt(x, stable), 60);
    expect(s.app().spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    expect(s.app().status).toMatchObject({ currentRevision: stable, updateRevision: bad });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.rolloutAborted)).toHaveLength(1);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.progressDeadlineExceeded)).toHaveLength(1);
    expect(s.violations).toEqual([]);
  });
});

describe('through lifecycle hooks', () => {
  const TRAFFIC = 'traffic.example/serving';
  const state = (p: Pod): string | undefined => p.metadata.labels?.[LIFECYCLE_STATE_LABEL];

  it.each(policies)('%s: a pod going back waits on preDelete; none is deleted while its handler label is on', async (podManagementPolicy) => {
    const template = (tag: string) => ({
      metadata: { labels: { app: 'web', [TRAFFIC]: 'yes' } },
      spec: { containers: [{ name: 'main', image: `registry.example/web:${tag}` }] },
    });
    const steps = [{ replicas: 2 }, { pause: { duration: '1h' } }];
    const s = new Scenario(
      {
        ...spec(podManagementPolicy, { maxUnavailable: 1, canary: { steps } }),
        template: template('v1'),
        lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' } } },
      },
      { terminateTicks: 1, startTicks: 1 },
    );
    // The traffic manager: removes the handler label of a pod waiting on preDelete, two steps after it asked.
    const asked = new Map<string, number>();
    let labelled = new Set<string>();
    let seen = 0;
    const deletedWhileHeld: string[] = [];
    const run = async (done: (x: Scenario) => boolean): Promise<void> => {
      for (let i = 0; i < 300; i++) {
        await s.step();
        for (const name of s.cluster.podDeletions.slice(seen)) if (labelled.has(name)) deletedWhileHeld.push(name);
        seen = s.cluster.podDeletions.length;
        for (const p of s.pods().filter((x) => state(x) === 'PreparingDelete' && x.metadata.labels?.[TRAFFIC] === 'yes')) {
          const key = p.metadata.uid ?? '';
          const since = asked.get(key) ?? i;
          asked.set(key, since);
          if (i - since >= 2) await s.cluster.client().pods.patch(NS, p.metadata.name ?? '', { metadata: { labels: { [TRAFFIC]: null } } });
        }
        labelled = new Set(s.pods().flatMap((p) => (p.metadata.labels?.[TRAFFIC] === 'yes' ? [p.metadata.name ?? ''] : [])));
        if (done(s)) return;
      }
      throw new Error(
        `no convergence: ${s
          .pods()
          .map((p) => `${p.metadata.name ?? ''}@${getPodRevision(p) ?? ''}:${state(p) ?? '-'}`)
          .join(' ')}`,
      );
    };
    await run((x) => x.converged() && x.pods().every((p) => state(p) === 'Normal'));
    const stable = s.app().status!.updateRevision!;
    s.edit({ template: template('v2') });
    await run((x) => x.app().status?.canary?.step === 1 && x.pods().filter((p) => getPodRevision(p) !== stable && state(p) === 'Normal').length === 2);
    const next = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 1 });
    const before = s.cluster.podDeletions.length;
    s.cluster.annotateApp(NS, 'web', { [RolloutAnnotation.abort]: next });
    await run((x) => allAt(x, stable) && x.pods().every((p) => state(p) === 'Normal'));
    expect(deletedWhileHeld).toEqual([]);
    expect(s.cluster.podDeletions.slice(before).sort()).toEqual(['web-2', 'web-3']);
    expect(s.violations).toEqual([]);
  });
});
