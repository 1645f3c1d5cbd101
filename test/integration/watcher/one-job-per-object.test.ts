/**
 * The workqueue guarantee end to end, with the real processes: one `ebb watcher` and two `ebb worker`
 * processes (concurrency 8 each) against the real apiserver and Redis. 200 rapid spec edits over 20 Apps;
 * the workers' debug logs record every reconcile run. Per App, runs never overlap in time (across both
 * processes), every edit written while a run of its App was in progress is followed by a run that starts
 * after that run ended, and in the end every App's latest generation is observed.
 *
 * The workers reach the apiserver through a proxy that adds 15 ms each way, so a reconcile (GET + status
 * PATCH) takes tens of milliseconds and many edits land while their App's job runs — the case under test.
 * Run unsharded and with three queue shards (EBB_QUEUE_SHARDS=3: each worker process runs one BullMQ
 * Worker per shard, and an App's jobs and timers stay in its shard).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshNamespace, sandbox } from '../support.ts';
import {
  appNames,
  createApps,
  deleteNamespace,
  ebbEnv,
  editApp,
  kubeconfigServer,
  overlappingRuns,
  printLogsOnFailure,
  proxiedKubeconfig,
  reconcileRuns,
  runsByApp,
  spawnEbb,
  startTcpProxy,
  uniquePrefix,
  waitAllObserved,
  type EbbProcess,
  type TcpProxy,
} from './helpers.ts';

const APPS = 20;
const EDITS = 200;
const EDITORS = 8;

interface Edit {
  app: string;
  sentAt: number;
  doneAt: number;
  generation: number;
}

describe.each([{ shards: 1 }, { shards: 3 }])(
  'one active job per object, changes during a run processed after it (2 worker processes x 8, $shards shard(s))',
  ({ shards }) => {
    let ns = '';
    let proxy: TcpProxy | undefined;
    const procs: EbbProcess[] = [];

    beforeAll(async () => {
      ns = await freshNamespace(`dedup-${shards}`);
    });

    afterAll(async () => {
      await Promise.all(procs.map((p) => p.stop()));
      await proxy?.stop();
      await deleteNamespace(sandbox().rest, ns);
    });

    it("never overlaps runs of one App and observes every App's last edit", async () => {
      const { rest, kubeconfig, redisUrl, dir } = sandbox();
      printLogsOnFailure(procs);
      const names = appNames(APPS);
      await createApps(rest, ns, names);

      proxy = await startTcpProxy(await kubeconfigServer(kubeconfig), { delayMs: 15 });
      const slowKubeconfig = await proxiedKubeconfig(kubeconfig, join(dir, `${ns}-slow.kubeconfig`), proxy.port);
      const common = { redisUrl, prefix: uniquePrefix('dedup'), namespaces: [ns] };
      const sharding = { EBB_QUEUE_SHARDS: String(shards) };
      const watcher = spawnEbb('watcher', ebbEnv({ ...common, kubeconfig }, { EBB_RESYNC_PERIOD: '0', ...sharding }));
      procs.push(watcher);
      const workers = [0, 1].map((i) =>
        spawnEbb(
          'worker',
          ebbEnv({ ...common, kubeconfig: slowKubeconfig }, { EBB_WORKER_CONCURRENCY: '8', EBB_LOG_LEVEL: 'debug', ...sharding }),
          `worker-${i}`,
        ),
      );
      procs.push(...workers);
      await Promise.all([watcher.httpPort(), ...workers.map((w) => w.httpPort())]);
      for (const w of workers) expect(w.logs.find((l) => l.msg === 'worker started')?.['shards'], `${w.name} consumes every shard`).toBe(shards);
      await waitAllObserved(rest, ns, APPS);

      // 200 edits as fast as 8 concurrent editors can write them, each to a random App.
      const edits: Edit[] = [];
      await Promise.all(
        Array.from({ length: EDITORS }, async () => {
          for (let n = 0; n < EDITS / EDITORS; n++) {
            const app = names[Math.floor(Math.random() * names.length)]!;
            const sentAt = Date.now();
            const generation = await editApp(rest, ns, app);
            edits.push({ app, sentAt, doneAt: Date.now(), generation });
          }
        }),
      );
      const lastGeneration = new Map<string, number>();
      for (const e of edits) lastGeneration.set(e.app, Math.max(lastGeneration.get(e.app) ?? 0, e.generation));

      const final = await waitAllObserved(rest, ns, APPS, 60_000);
      for (const a of final) {
        if (lastGeneration.has(a.name)) expect(a.observedGeneration, `${a.name} observed its last edit`).toBe(lastGeneration.get(a.name));
      }

      await Promise.all(procs.map((p) => p.stop()));
      const runs = workers.flatMap((w) => reconcileRuns(w));
      const byApp = runsByApp(runs);
      expect(runs.length, 'reconcile runs recorded').toBeGreaterThan(EDITS / 4);
      for (const w of workers) expect(runs.filter((r) => r.worker === w.name).length, `${w.name} ran reconciles`).toBeGreaterThan(0);
      expect(overlappingRuns(runs)).toEqual([]);

      // Every edit written entirely within a run of its App is processed by a later run: one that starts
      // at or after that run's end (dedup keepLastIfActive turns the enqueue into a follow-up job).
      let duringRun = 0;
      const notFollowedUp: string[] = [];
      for (const e of edits) {
        const list = byApp.get(`${ns}/${e.app}`) ?? [];
        const within = list.find((r) => r.startedAt <= e.sentAt && e.doneAt <= r.finishedAt);
        if (!within) continue;
        duringRun++;
        if (!list.some((r) => r.startedAt >= within.finishedAt)) notFollowedUp.push(`${e.app} gen ${e.generation} during job ${within.jobId}`);
      }
      expect(notFollowedUp).toEqual([]);
      expect(duringRun, 'edits written while their App was being reconciled (the case under test)').toBeGreaterThan(10);

      expect(workers.flatMap((w) => w.logs.filter((l) => l.msg === 'reconcile gave up'))).toEqual([]);
      const perWorker = workers.map((w) => `${w.name}=${runs.filter((r) => r.worker === w.name).length}`).join(' ');
      process.stdout.write(
        `one-job-per-object (${shards} shard(s)): ${edits.length} edits, ${duringRun} during a run of their App, ${runs.length} runs (${perWorker}), 0 overlaps\n`,
      );
    });
  },
);
