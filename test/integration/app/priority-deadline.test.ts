/**
 * On the sandbox, with the real watcher and a worker that the test restarts: priority updates
 * (`unorderedUpdate.priorityStrategy`) update pods in label order under partition and maxUnavailable, an
 * ordered-key value that ends in no integer is reported and updated last, and the admission refusals of what
 * users get wrong; the progress deadline stops a canary whose new pod never becomes ready, its clock on the
 * App (a worker stopped past the deadline does not lose it) and its check a timer (the stuck pod sends no event).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { appRef } from '../../../src/api/group.ts';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import type { Condition } from '../../../src/api/meta.ts';
import { createLogger } from '../../../src/common/log.ts';
import { sleep } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace, rejection, sandbox } from '../support.ts';
import { controllerEnv, createApp, eventsOf, patchApp, revisionOf, settled, template, uniqueName, until, unavailable, type Snapshot } from './harness.ts';

let ns = '';
let env: Record<string, string> = {};
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;
const log = createLogger('it-priority', 'warn');
const startTheWorker = async () => {
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
};

beforeAll(async () => {
  ns = await freshNamespace('app-prio');
  env = controllerEnv(ns);
  watcher = await startWatcher(parseWatcherConfig(env), log);
  await startTheWorker();
});

afterAll(async () => {
  await worker?.stop();
  await watcher?.stop();
});

const condition = (s: Snapshot, type: string): Condition | undefined => s.app.status?.conditions?.find((c) => c.type === type);

async function labelPod(name: string, labels: Record<string, string>): Promise<void> {
  await sandbox().rest.patch(core('pods', ns, name), { metadata: { labels } }, PatchType.merge);
}

/** Follows a rollout away from revision `from` to `done`, recording the order in which pods first ran the new revision. */
async function updateOrder(name: string, from: string | undefined, done: (s: Snapshot) => boolean): Promise<{ order: string[]; last: Snapshot; peak: number }> {
  const order: string[] = [];
  let peak = 0;
  const last = await until(ns, name, done, {
    timeoutMs: 90_000,
    onEach: (s) => {
      peak = Math.max(peak, unavailable(s));
      const update = s.app.status?.updateRevision;
      for (const pod of s.pods) {
        const podName = pod.metadata.name ?? '';
        if (update !== undefined && update !== from && revisionOf(pod) === update && !order.includes(podName)) order.push(podName);
      }
    },
  });
  return { order, last, peak };
}

const parallel = { podManagementPolicy: 'Parallel' } as const;

describe('priority updates', () => {
  it('orderPriority: highest integer first, a non-numeric value reported (condition and Event) and updated last', async () => {
    const name = uniqueName('ord');
    await createApp(ns, name, {
      replicas: 4,
      ...parallel,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } } } },
    });
    const v1 = (await settled(ns, name)).app.status?.updateRevision;
    await labelPod(`${name}-0`, { rank: 'db-3' });
    await labelPod(`${name}-1`, { rank: 'leader' });
    await labelPod(`${name}-2`, { rank: '1' });
    await labelPod(`${name}-3`, { rank: '2' });

    await patchApp(ns, name, { template: template(name, 'v2') });
    const ignoredSeen: Condition[] = [];
    const { order, peak } = await updateOrder(name, v1, (s) => {
      const c = condition(s, ConditionType.priorityLabelIgnored);
      if (c?.status === 'True') ignoredSeen.push(c);
      const st = s.app.status;
      return st?.updateRevision !== v1 && st?.updatedReplicas === 4 && st.currentRevision === st.updateRevision && st.readyReplicas === 4;
    });
    // Not the default descending ordinal (3, 2, 1, 0): by the integer each value ends with, "leader" last.
    expect(order).toEqual([`${name}-0`, `${name}-3`, `${name}-2`, `${name}-1`]);
    expect(peak).toBeLessThanOrEqual(1);
    expect(ignoredSeen[0]?.reason).toBe(Reason.nonNumericPriority);
    expect(ignoredSeen[0]?.message).toContain(`${name}-1 (rank="leader")`);
    const events = await eventsOf(ns, name, EventReason.priorityLabelIgnored);
    expect(events).toHaveLength(1);
    expect(events[0]?.type).toBe('Warning');
    // Once the pod is updated nothing is ignored any more.
    const cleared = await until(ns, name, (s) => condition(s, ConditionType.priorityLabelIgnored)?.status === 'False', { timeoutMs: 30_000 });
    expect(condition(cleared, ConditionType.priorityLabelIgnored)?.reason).toBe(Reason.priorityLabelsNumeric);
  });

  it('weightPriority under a partition: the partition counts pods, the heaviest go first, the lightest stays', async () => {
    const name = uniqueName('wgt');
    await createApp(ns, name, {
      replicas: 3,
      ...parallel,
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          partition: 1,
          unorderedUpdate: {
            priorityStrategy: {
              weightPriority: [
                { weight: 60, matchSelector: { matchLabels: { zone: 'a' } } },
                { weight: 30, matchSelector: { matchExpressions: [{ key: 'canary', operator: 'Exists' }] } },
              ],
            },
          },
        },
      },
    });
    const v1 = (await settled(ns, name)).app.status?.updateRevision;
    await labelPod(`${name}-0`, { zone: 'a' }); // 60
    await labelPod(`${name}-1`, { canary: 'yes' }); // 30; web-2 weighs 0
    await patchApp(ns, name, { template: template(name, 'v2') });
    const { order, last } = await updateOrder(name, v1, (s) => {
      const st = s.app.status;
      return st?.updateRevision !== v1 && st?.updatedReplicas === 2 && st.readyReplicas === 3;
    });
    expect(order).toEqual([`${name}-0`, `${name}-1`]);
    await sleep(1_500);
    const held = await until(ns, name, () => true);
    const update = last.app.status?.updateRevision;
    expect(held.pods.map((p) => revisionOf(p) === update)).toEqual([true, true, false]);
    expect(condition(held, ConditionType.progressing)?.reason).toBe(Reason.rolloutComplete);
  });

  const valid = (name: string, spec: Partial<AppSpec>) => ({
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name, namespace: ns },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, serviceName: name, template: template(name, 'v1'), ...spec },
  });
  const order = { orderPriority: [{ orderedKey: 'rank' }] };
  const weight = { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { zone: 'a' } } }] };
  const ru = (rollingUpdate: object) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate } });

  it.each<[string, Partial<AppSpec>, string]>([
    ['priorityStrategy with OrderedReady', ru({ unorderedUpdate: { priorityStrategy: order } }), 'unorderedUpdate requires podManagementPolicy Parallel'],
    [
      'priorityStrategy with both kinds',
      { ...parallel, ...ru({ unorderedUpdate: { priorityStrategy: { ...order, ...weight } } }) },
      'priorityStrategy must set exactly one of weightPriority or orderPriority',
    ],
    ['priorityStrategy with neither', { ...parallel, ...ru({ unorderedUpdate: { priorityStrategy: {} } }) }, 'exactly one of weightPriority or orderPriority'],
    [
      'a weight over 100',
      { ...parallel, ...ru({ unorderedUpdate: { priorityStrategy: { weightPriority: [{ weight: 101, matchSelector: {} }] } } }) },
      'should be less than or equal to 100',
    ],
    [
      'an orderedKey that is no label key',
      { ...parallel, ...ru({ unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: 'no spaces' }] } } }) },
      'orderedKey must be a label key',
    ],
    [
      'progressDeadlineSeconds equal to minReadySeconds',
      { minReadySeconds: 30, progressDeadlineSeconds: 30 },
      'progressDeadlineSeconds must be greater than minReadySeconds',
    ],
    ['pauseOnProgressDeadline without a deadline', ru({ pauseOnProgressDeadline: true }), 'pauseOnProgressDeadline requires spec.progressDeadlineSeconds'],
  ])('refuses %s at admission', async (_what, spec, message) => {
    const err = await rejection(sandbox().rest.create(appRef(ns), valid(uniqueName('bad'), spec)));
    expect(err.status).toBe(422);
    expect(err.message).toContain(message);
  });
});

const DEADLINE_S = 6;
const paused = (s: Snapshot): boolean => s.app.spec.updateStrategy?.rollingUpdate?.paused === true;

/** A canary App whose v2 cannot be scheduled anywhere: its pod stays Pending and, once marked unschedulable, sends no event. */
async function stuckCanary(name: string): Promise<number> {
  await createApp(ns, name, {
    replicas: 3,
    ...parallel,
    progressDeadlineSeconds: DEADLINE_S,
    // maxUnavailable 2: the stuck pod uses one, so the fix can still replace it.
    updateStrategy: {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 2, pauseOnProgressDeadline: true, canary: { steps: [{ replicas: 1 }, { pause: {} }] } },
    },
  });
  const steady = await settled(ns, name);
  expect(steady.app.status?.rolloutProgress).toBeUndefined();
  const bad = template(name, 'v2');
  await patchApp(ns, name, { template: { ...bad, spec: { ...bad.spec, nodeSelector: { 'ebb.test/none': 'x' } } } });
  const started = await until(ns, name, (s) => s.app.status?.rolloutProgress !== undefined && s.pods.some((p) => p.status?.phase === 'Pending'), {
    timeoutMs: 30_000,
  });
  const clock = started.app.status?.rolloutProgress;
  expect(clock?.updatedAvailableReplicas).toBe(0);
  expect(clock?.revision).toBe(started.app.status?.updateRevision);
  return Date.parse(clock?.lastProgressTime ?? '');
}

/** No worker while the deadline passes (the clock is on the App, the timer in Redis); a new worker then pauses the rollout. */
async function deadlinePassesWithoutWorker(name: string, startedAt: number): Promise<Snapshot> {
  await worker?.stop();
  worker = undefined;
  await sleep(Math.max(0, startedAt + DEADLINE_S * 1000 + 1_000 - Date.now()));
  const meanwhile = await until(ns, name, () => true);
  expect(paused(meanwhile)).toBe(false);
  expect(condition(meanwhile, ConditionType.progressing)?.status).toBe('True');
  await startTheWorker();
  const restartedAt = Date.now();
  // The timer fired while no worker ran; its reconcile runs as soon as one does (not at the 10-minute resync).
  // The pause (a spec write) lands just before the status write that drops the clock: wait for both.
  const stopped = await until(ns, name, (s) => paused(s) && s.app.status?.rolloutProgress === undefined, { timeoutMs: 30_000 });
  expect(Date.now() - restartedAt).toBeLessThan(20_000);
  return stopped;
}

describe('progress deadline', () => {
  it('a canary whose new pod never becomes ready pauses itself; the clock survives a worker stopped past the deadline; resume and a new revision clear it', async () => {
    const name = uniqueName('pdl');
    const startedAt = await stuckCanary(name);
    const stopped = await deadlinePassesWithoutWorker(name, startedAt);
    expect(stopped.app.status?.rolloutProgress).toBeUndefined();
    const progressing = condition(stopped, ConditionType.progressing);
    expect(progressing).toMatchObject({ status: 'False', reason: Reason.progressDeadlineExceeded });
    expect(progressing?.message).toContain(`${DEADLINE_S}s`);
    const events = await eventsOf(ns, name, EventReason.progressDeadlineExceeded);
    expect(events.map((e) => e.type)).toEqual(['Warning']);
    // Only the canary's pod went: the other two still run v1.
    const v2 = stopped.app.status?.updateRevision;
    expect(stopped.pods.filter((p) => revisionOf(p) === v2)).toHaveLength(1);
    await sleep(1_000);
    const held = await until(ns, name, (s) => condition(s, ConditionType.paused)?.reason === Reason.progressDeadlineExceeded, { timeoutMs: 10_000 });
    expect(condition(held, ConditionType.progressing)?.reason).toBe(Reason.progressDeadlineExceeded);
    expect(held.app.status?.rolloutProgress).toBeUndefined();

    // Resume: a fresh clock, Progressing True again (and, still stuck, paused again after another deadline).
    await patchApp(ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    const resumed = await until(ns, name, (s) => condition(s, ConditionType.progressing)?.status === 'True' && s.app.status?.rolloutProgress !== undefined, {
      timeoutMs: 15_000,
    });
    const restartedClock = Date.parse(resumed.app.status?.rolloutProgress?.lastProgressTime ?? '');
    expect(restartedClock).toBeGreaterThan(startedAt);
    // Nothing happens to the stuck pod: only the deadline's timer brings the App back, no earlier than the deadline.
    await until(ns, name, paused, { timeoutMs: DEADLINE_S * 1000 + 20_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(restartedClock + DEADLINE_S * 1000);

    // A new revision (the fix) and resume: the deadline no longer holds it, the canary step completes.
    const fix = template(name, 'v3');
    await patchApp(ns, name, { template: { ...fix, spec: { ...fix.spec, nodeSelector: null } }, updateStrategy: { rollingUpdate: { paused: false } } });
    const fixed = await until(ns, name, (s) => s.app.status?.canary?.step === 1 && paused(s), { timeoutMs: 30_000 });
    expect(condition(fixed, ConditionType.progressing)).toMatchObject({ status: 'True', reason: Reason.canaryStep });
    expect(condition(fixed, ConditionType.paused)?.reason).toBe(Reason.canaryPause);
    expect(fixed.app.status?.rolloutProgress).toBeUndefined();
  });
});
