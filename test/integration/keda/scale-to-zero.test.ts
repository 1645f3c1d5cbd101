/**
 * Scale to zero with the real KEDA operator (built by `make keda`, which `make test` runs first). When the
 * tool cache does not hold it, the test fails under `make test` (EBB_REQUIRE_KEDA=1) and is skipped, with a
 * printed reason, in a bare `npx vitest run`. The ScaledObject of deploy/keda, pointed at a real
 * `ebb watcher`'s external-push scaler, drives a stand-in `ebb-worker` Deployment. The sandbox runs no Deployment controller, so no pods
 * exist; a follower in the test runs one real `ebb worker` process while the Deployment asks for replicas.
 *
 *  - KEDA creates an HPA carrying the scaler's metric (GetMetricSpec): external metric and target per worker;
 *  - 0 → 1 when a reconcile is enqueued, pushed through StreamIsActive: pollingInterval is 300 s and KEDA
 *    polled when the scale loop started, so only the push explains a scale-up within seconds;
 *  - back to 0 after the cooldown once the queue is empty (KEDA scales to zero from its polling, so from
 *    here on the ScaledObject polls every second: the IsActive answers are exercised as well as the stream);
 *  - stays 0 while only far-future timers exist, and while the queue is paused even when work is enqueued;
 *    resuming the queue wakes a worker again.
 */
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, createTimersQueue, type ReconcileQueue, type TimersQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { setTimer } from '../../../src/queue/timers.ts';
import { METRIC_NAME } from '../../../src/watcher/scaler.ts';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appManifest,
  deleteNamespace,
  ebbEnv,
  editApp,
  httpGet,
  printLogsOnFailure,
  spawnEbb,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
} from '../watcher/helpers.ts';
import { kedaInstall, startKedaOperator, tail, type KedaOperator } from './operator.ts';
import {
  deploymentRef,
  followDeployment,
  hpaRef,
  onlyOf,
  renderedKeda,
  scaledObjectRef,
  standInDeployment,
  WORKER,
  type Follower,
  type ReplicaChange,
} from './scaling.ts';

const COOLDOWN_S = 5;
/** Long enough that no poll falls inside the scale-up check: only the push can scale up. */
const SLOW_POLL_S = 300;
const FAST_POLL_S = 1;
/** How long "stays at zero" is watched: several polls and stream re-checks. */
const HOLD_MS = 6_000;

const install = kedaInstall();
/** Set by `make test`, which builds the operator first: a missing operator is then a failure, not a skip. */
const required = process.env['EBB_REQUIRE_KEDA'] === '1';
if ('missing' in install && !required) process.stdout.write(`test/integration/keda skipped: ${install.missing}\n`);

/** The test-only patch: the scaler of this test's watcher, a short cooldown, a poll that never comes. */
async function testScaledObject(ns: string, scalerPort: number): Promise<Record<string, unknown>> {
  const so = onlyOf(await renderedKeda(ns), 'ScaledObject');
  const spec = so['spec'] as { triggers: { type: string; metadata: Record<string, string> }[] } & Record<string, unknown>;
  const trigger = spec.triggers.find((t) => t.type === 'external-push');
  if (!trigger) throw new Error('the ScaledObject of deploy/keda has no external-push trigger');
  trigger.metadata['scalerAddress'] = `127.0.0.1:${scalerPort}`;
  spec['pollingInterval'] = SLOW_POLL_S;
  spec['cooldownPeriod'] = COOLDOWN_S;
  return so;
}

interface Hpa {
  spec: {
    scaleTargetRef: { kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: { type: string; external?: { metric: { name: string; selector?: unknown }; target: Record<string, unknown> } }[];
  };
}

interface ScaledObject {
  metadata: { generation: number };
  status?: { externalMetricNames?: string[]; hpaName?: string; conditions?: { type: string; status: string }[] };
}

// Registered only when it must fail: a green run lists no skipped test.
if ('missing' in install && required) {
  describe('the KEDA operator under make test', () => {
    it('is in the tool cache', () => {
      expect.fail(`EBB_REQUIRE_KEDA=1 (make test, which builds the operator first), yet ${install.missing}`);
    });
  });
}

describe.skipIf('missing' in install)('scale to zero with the KEDA operator', () => {
  let ns = '';
  let conn: Redis;
  let reconcile: ReconcileQueue;
  let timers: TimersQueue;
  let watcher: EbbProcess;
  let operator: KedaOperator | undefined;
  let follower: Follower;
  const procs: EbbProcess[] = [];

  const rest = (): KubeRest => sandbox().rest;
  const changesSince = (t: number): ReplicaChange[] => follower.changes.filter((c) => c.at >= t);
  const waitReplicas = (n: number, timeoutMs: number, what: string): Promise<ReplicaChange> =>
    waitFor(() => (follower.replicas() === n ? follower.changes.at(-1) : undefined), { timeoutMs, intervalMs: 20, what });
  /** Fails with the operator's log, which says why KEDA did (not) scale. */
  const explain = (err: unknown): never => {
    throw new Error(`${(err as Error).message}\n--- KEDA operator log (last lines):\n${operator ? tail(operator.logFile) : ''}`);
  };

  beforeAll(async () => {
    if ('missing' in install) return;
    const { kubeconfig, redisUrl, dir } = sandbox();
    ns = await freshNamespace('keda');
    const prefix = uniquePrefix('keda');
    // Debug: the scaler logs its streams opening and closing at that level.
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_RESYNC_PERIOD: '0', EBB_LOG_LEVEL: 'debug' });
    const cfg = parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix });
    conn = redisConnection(redisUrl, { forWorker: false });
    reconcile = createReconcileQueue(conn, cfg);
    timers = createTimersQueue(conn, cfg);

    await rest().create(deploymentRef(ns), standInDeployment());
    watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    const started = await watcher.waitForLog((l) => l.msg === 'watcher started', 30_000, '"watcher started"');
    const scalerPort = started['scalerPort'] as number;
    await waitFor(async () => ((await httpGet(started['port'] as number, '/readyz')).status === 200 ? true : undefined), {
      timeoutMs: 20_000,
      what: 'watcher ready',
    });
    follower = followDeployment(rest(), ns, (name) => {
      const w = spawnEbb('worker', env, name);
      procs.push(w);
      return w;
    });

    const t0 = Date.now();
    operator = await startKedaOperator({ install, rest: rest(), kubeconfig, dir: join(dir, `keda-${ns}`), watchNamespace: ns });
    process.stdout.write(`KEDA ${install.version} operator ready in ${Date.now() - t0} ms (log: ${operator.logFile})\n`);
    await rest().create(scaledObjectRef(ns), await testScaledObject(ns, scalerPort));
    // The scale loop (which polls once at its start) and the push stream start together.
    await watcher.waitForLog((l) => l.msg === 'scaler stream opened', 60_000, 'KEDA to open StreamIsActive').catch(explain);
    await waitFor(
      async () => {
        const so = await rest().get<ScaledObject>(scaledObjectRef(ns, WORKER));
        return so.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? so : undefined;
      },
      { timeoutMs: 30_000, what: 'the ScaledObject Ready' },
    ).catch(explain);
  });

  afterAll(async () => {
    await follower?.stop();
    if (ns) {
      // KEDA's finalizer on the ScaledObject is removed by the operator: delete it while the operator runs.
      await rest()
        .delete(scaledObjectRef(ns, WORKER))
        .catch(() => undefined);
      await waitFor(
        () =>
          rest()
            .get(scaledObjectRef(ns, WORKER))
            .then(
              () => undefined,
              () => true,
            ),
        {
          timeoutMs: 30_000,
          what: 'the ScaledObject gone',
        },
      ).catch(() => undefined);
    }
    await operator?.stop();
    await Promise.all(procs.map((p) => p.stop()));
    await Promise.all([reconcile?.close(), timers?.close()]);
    conn?.disconnect();
    if (ns) await deleteNamespace(rest(), ns);
  });

  it('creates an HPA carrying the scaler metric', async () => {
    const so = await rest().get<ScaledObject>(scaledObjectRef(ns, WORKER));
    const metricName = so.status?.externalMetricNames?.[0];
    expect(metricName, 'KEDA named the metric after GetMetricSpec').toMatch(new RegExp(`^s0-${METRIC_NAME}$`));
    const hpa = await rest().get<Hpa>(hpaRef(ns, so.status?.hpaName ?? `keda-hpa-${WORKER}`));
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: WORKER });
    expect(hpa.spec).toMatchObject({ minReplicas: 1, maxReplicas: 10 });
    const external = hpa.spec.metrics?.filter((m) => m.type === 'External') ?? [];
    expect(external).toHaveLength(1);
    expect(external[0]?.external?.metric.name).toBe(metricName);
    // jobsPerWorker of deploy/keda (1000), answered by GetMetricSpec; the HPA keeps it as a canonical quantity.
    expect(external[0]?.external?.target).toEqual({ type: 'AverageValue', averageValue: '1k' });
  });

  it('0 → 1 when a reconcile is enqueued, pushed through StreamIsActive (no poll for 300 s)', async () => {
    printLogsOnFailure(procs);
    expect(follower.replicas()).toBe(0);
    // KEDA polls when a scale loop (re)starts, and every restart reopens the stream: none may happen here.
    const streams = (): number => watcher.logs.filter((l) => l.msg === 'scaler stream opened').length;
    const opened = streams();
    const t0 = Date.now();
    await rest().create(appRef(ns), appManifest('web'));
    const up = await waitReplicas(1, 15_000, 'KEDA to scale the worker to 1').catch(explain);
    process.stdout.write(`App created → Deployment at 1 replica in ${up.at - t0} ms\n`);
    expect(up.at - t0, 'far sooner than the next poll').toBeLessThan(10_000);
    expect(streams(), 'the scale loop did not restart (which would have polled)').toBe(opened);
    await waitAllObserved(rest(), ns, 1, 30_000);
    expect(follower.workers.length).toBe(1);
  });

  it('back to 0 after the cooldown once the queue is empty', async () => {
    printLogsOnFailure(procs);
    const up = follower.changes.at(-1);
    expect(up?.replicas).toBe(1);
    // KEDA scales to zero only from its polling: poll every second from now on (the scale loop restarts).
    await rest().patch(scaledObjectRef(ns, WORKER), { spec: { pollingInterval: FAST_POLL_S } }, PatchType.merge);
    const down = await waitReplicas(0, (COOLDOWN_S + 15) * 1000, 'KEDA to scale the worker to 0').catch(explain);
    process.stdout.write(`Deployment back at 0 replicas ${down.at - up!.at} ms after the scale-up (cooldown ${COOLDOWN_S} s)\n`);
    // Both times are when the follower saw the change (it reads every 50 ms): allow for a late first read.
    expect(down.at - up!.at, 'not before the cooldown').toBeGreaterThanOrEqual(COOLDOWN_S * 1000 - 1000);
    expect(await reconcile.getJobCounts('wait', 'prioritized', 'active', 'delayed')).toEqual({ wait: 0, prioritized: 0, active: 0, delayed: 0 });
    await waitFor(() => (follower.workers.every((w) => !w.running()) ? true : undefined), { timeoutMs: 15_000, what: 'the worker stopped' });
  });

  it('stays 0 while only far-future timers exist', async () => {
    const from = Date.now();
    expect(await setTimer(timers, { kind: 'App', namespace: ns, name: 'web' }, 'grace', Date.now() + 3_600_000)).toBe('created');
    await sleep(HOLD_MS);
    expect(changesSince(from)).toEqual([]);
    expect(follower.replicas()).toBe(0);
    expect(await timers.getDelayedCount()).toBe(1);
  });

  it('stays 0 while the queue is paused, even as work is enqueued; resuming wakes a worker', async () => {
    printLogsOnFailure(procs);
    await reconcile.pause();
    const from = Date.now();
    const generation = await editApp(rest(), ns, 'web');
    await waitFor(
      async () => {
        // A paused queue keeps its jobs in the wait list (BullMQ marks the queue paused in its meta).
        const c = await reconcile.getJobCounts('wait', 'prioritized');
        return (c['wait'] ?? 0) + (c['prioritized'] ?? 0) > 0 ? true : undefined;
      },
      { timeoutMs: 10_000, what: 'the watcher to enqueue the edit' },
    );
    await sleep(HOLD_MS);
    expect(changesSince(from), 'no scale-up while paused').toEqual([]);

    const resumed = Date.now();
    await reconcile.resume();
    const up = await waitReplicas(1, 10_000, 'KEDA to scale the worker to 1 after resume').catch(explain);
    process.stdout.write(`queue resumed → Deployment at 1 replica in ${up.at - resumed} ms\n`);
    const apps = await waitAllObserved(rest(), ns, 1, 30_000);
    expect(apps[0]?.observedGeneration).toBe(generation);
    await waitReplicas(0, (COOLDOWN_S + 15) * 1000, 'KEDA to scale the worker back to 0').catch(explain);
  });
});
