/**
 * Poison pills on the sandbox: Apps whose reconcile always fails (a namespace quota refuses their pods) back
 * off to the cap and no further, show why in a condition, sit among the queue's retrying jobs and then its
 * failed ones; an App whose claim never binds shows 0 of 1 pods available and waits without reconciling in a loop. Meanwhile a healthy App in
 * the same namespace is created and rolled out about as fast as before the poison Apps existed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REPLICAS } from '../../../src/api/app-spec.ts';
import { ConditionType, Reason } from '../../../src/api/keys.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { createLogger } from '../../../src/common/log.ts';
import { core } from '../../../src/kube/paths.ts';
import { createReconcileQueue, redisConnection, type ReconcileQueue } from '../../../src/queue/index.ts';
import { readQueueStatus } from '../../../src/queue/status.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { sandbox } from '../support.ts';
import { createApp, getApp, image, patchApp, settled, uniqueName, useController } from '../app/harness.ts';
import { reconcileLog } from './reconcile-log.ts';
import { intervals, mean } from './outcome.ts';

const BACKOFF_BASE_MS = 200;
const BACKOFF_MAX_MS = 2_000;
/** The product's default: after this many attempts the job is kept as failed until the next resync or edit. */
const ATTEMPTS = 20;
const POISON_APPS = 10;
const logs = reconcileLog();
const ctl = useController('poison', {
  log: logs.log,
  env: { EBB_QUEUE_BACKOFF_BASE: `${BACKOFF_BASE_MS}ms`, EBB_QUEUE_BACKOFF_MAX: `${BACKOFF_MAX_MS}ms`, EBB_QUEUE_ATTEMPTS: String(ATTEMPTS) },
});
const figures: Record<string, unknown> = {};
const cleanups: (() => Promise<unknown>)[] = [];
let queue: ReconcileQueue;

beforeAll(() => {
  const cfg = parseWorkerConfig(ctl.env).queue;
  queue = createReconcileQueue(redisConnection(cfg.redis, { forWorker: false, name: 'it-poison', log: createLogger('it-poison', 'warn') }), cfg);
});
afterAll(async () => {
  process.stdout.write(`poison figures ${JSON.stringify(figures)}\n`);
  for (const clean of cleanups.reverse()) await clean().catch(() => undefined);
  await queue.close();
});

const scheduling = (name?: string) => ({ group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', name });
const storageClasses = (name?: string) => ({ group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', name });

/** A PriorityClass whose pods a `pods: 0` quota in the test's namespace refuses; its name. */
async function refusingQuota(ns: string): Promise<string> {
  const { rest } = sandbox();
  const name = uniqueName('ebb-test-poison');
  await rest.create(scheduling(), { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value: 1000 });
  cleanups.push(() => rest.delete(scheduling(name)));
  const spec = { hard: { pods: '0' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [name] }] } };
  await rest.create(core('resourcequotas', ns), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec });
  await waitFor(
    async () =>
      (await rest.get<{ status?: { hard?: Record<string, string> } }>(core('resourcequotas', ns, name))).status?.hard?.['pods'] === '0' ? true : undefined,
    { timeoutMs: 30_000, what: 'quota status' },
  );
  // In force once a dry-run pod of the class is refused by it (no App may create pods before that).
  const probe = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'probe-' },
    spec: { priorityClassName: name, containers: [{ name: 'c', image: image('probe') }] },
  };
  await waitFor(
    () =>
      rest.create(core('pods', ns), probe, { dryRun: 'All' }).then(
        () => undefined,
        (err: unknown) => (isKubeError(err, 'QuotaExceeded') ? true : undefined),
      ),
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `quota ${name} in force`,
    },
  );
  return name;
}

/** A StorageClass no provisioner serves: its claims stay Pending. */
async function neverBindingClass(): Promise<string> {
  const { rest } = sandbox();
  const name = uniqueName('ebb-test-nowhere');
  await rest.create(storageClasses(), {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'example.com/nowhere',
    volumeBindingMode: 'Immediate',
  });
  cleanups.push(() => rest.delete(storageClasses(name)));
  return name;
}

/** Milliseconds a healthy App takes to be created and settled, then to roll out a new image. */
async function healthyTimes(ns: string): Promise<{ createMs: number; rolloutMs: number }> {
  const name = uniqueName('healthy');
  let t = Date.now();
  await createApp(ns, name, { replicas: 3 });
  await settled(ns, name);
  const createMs = Date.now() - t;
  t = Date.now();
  await patchApp(ns, name, {
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: image('v2') }], terminationGracePeriodSeconds: 1 } },
  });
  await settled(ns, name, undefined, 90_000).then(async (s) => {
    if (s.pods.some((p) => p.spec?.containers[0]?.image !== image('v2'))) await settled(ns, name);
  });
  return { createMs, rolloutMs: Date.now() - t };
}

/**
 * Within a bound of the baseline: twice it, or 15 s more, whichever is larger. What the bound must catch is a
 * healthy App starved behind the poison Apps' retries, which would take their whole backoff schedule (20 attempts
 * up to 2 s apart: about 40 s). The poison Apps' own reconciles (one plans 10,000 pods each attempt) share the
 * machine's two cores with the healthy App's, so on a loaded machine it is slower by several seconds without
 * waiting behind them.
 */
const bound = (baselineMs: number): number => Math.max(2 * baselineMs, baselineMs + 15_000);

describe('poison Apps', () => {
  it('back off to the cap, show why, end among failed jobs, and do not slow a healthy App', async () => {
    const baseline = await healthyTimes(ctl.ns);

    const priorityClass = await refusingQuota(ctl.ns);
    const poison = Array.from({ length: POISON_APPS }, () => uniqueName('poison'));
    const poisonStart = Date.now();
    for (const [i, name] of poison.entries()) {
      await createApp(ctl.ns, name, {
        // The last one asks for the most pods an App may have: each of its plans holds that many creates.
        replicas: i === POISON_APPS - 1 ? MAX_REPLICAS : 2,
        podManagementPolicy: 'Parallel',
        template: {
          metadata: { labels: { app: name } },
          spec: { priorityClassName: priorityClass, containers: [{ name: 'main', image: image('v1') }], terminationGracePeriodSeconds: 1 },
        },
      });
    }
    const storageClassName = await neverBindingClass();
    const stuck = uniqueName('unbound');
    await createApp(ctl.ns, stuck, {
      replicas: 1,
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
    });

    // Visible in status: FailedCreatePod, retrying, with the apiserver's reason.
    const first = poison[0] ?? '';
    const failedCreate = await waitFor(
      async () => {
        const c = (await getApp(ctl.ns, first)).status?.conditions?.find((x) => x.type === ConditionType.failedCreatePod);
        return c?.status === 'True' && c.reason === Reason.createPodRetrying ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'FailedCreatePod CreatePodRetrying' },
    );
    expect(failedCreate.message).toContain('exceeded quota');
    // Among the retrying (delayed) jobs, with the refusal as the last error.
    const retrying = await waitFor(async () => (await queue.getJobs(['delayed'])).find((j) => j.data.name === first && j.attemptsMade >= 3), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the poison job among the delayed jobs',
    });
    expect(retrying.failedReason).toContain('exceeded quota');

    const withPoison = await healthyTimes(ctl.ns);
    figures['healthyMs'] = { baseline, withPoison };
    expect(withPoison.createMs).toBeLessThan(bound(baseline.createMs));
    expect(withPoison.rolloutMs).toBeLessThan(bound(baseline.rolloutMs));

    // Then among the failed jobs, after the last attempt; and no reconcile after that.
    const status = await waitFor(
      async () => {
        const s = await readQueueStatus(queue, { failedLimit: 100 });
        return poison.every((n) => s.failed.some((f) => (f.data as { name?: string }).name === n)) ? s : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'every poison job failed' },
    );
    const failed = status.failed.find((f) => (f.data as { name?: string }).name === first);
    expect(failed).toMatchObject({ attempts: ATTEMPTS });
    expect(failed?.lastError).toContain('exceeded quota');
    // A quota refusal heals with time, so a job that gave up does not drop its App: a timer brings it back
    // after the capped backoff, and it goes on at the backoff's pace (never a tight loop).
    const gaveUpAt = Date.now();
    await new Promise((r) => setTimeout(r, 5_000));
    for (const name of poison) {
      const again = logs.startsBetween(name, gaveUpAt);
      expect(again, `${name}: reconciled again after giving up`).toBeGreaterThan(0);
      expect(again, `${name}: at the backoff's pace`).toBeLessThanOrEqual(10);
    }

    // The backoff of the first job: every wait within the cap, and on average well above the base.
    const starts = (logs.starts.get(first) ?? []).slice(0, ATTEMPTS);
    expect(starts).toHaveLength(ATTEMPTS);
    const waits = intervals(starts).slice(3);
    expect(Math.max(...waits)).toBeLessThan(BACKOFF_MAX_MS + 1_500);
    expect(mean(waits)).toBeGreaterThan(3 * BACKOFF_BASE_MS);
    const spanMin = ((starts.at(-1) ?? 0) - (starts[0] ?? 0)) / 60_000;
    figures['poison'] = {
      attempts: starts.length,
      spanS: Math.round(spanMin * 600) / 10,
      reconcilesPerMinute: Math.round(starts.length / spanMin),
      meanWaitAtCapMs: Math.round(mean(waits)),
      maxWaitMs: Math.max(...waits),
      sinceCreateS: Math.round((gaveUpAt - poisonStart) / 100) / 10,
      maxReplicasAppAttempts: logs.startsBetween(poison.at(-1) ?? '', 0),
    };

    // The App whose claim never binds: not available, and reconciled only when something changes.
    const unbound = await getApp(ctl.ns, stuck);
    const progressing = unbound.status?.conditions?.find((c) => c.type === ConditionType.progressing);
    expect(progressing).toMatchObject({ status: 'True', message: '0 of 1 pods available' });
    expect(unbound.status?.readyReplicas ?? 0).toBe(0);
    const unboundReconciles = logs.startsBetween(stuck, 0);
    figures['unboundReconciles'] = unboundReconciles;
    expect(unboundReconciles).toBeLessThan(10);
  }, 240_000);
});
