/**
 * Soak: many small Apps edited at a steady rate for an hour while a worker is SIGKILLed and Redis
 * restarted every few minutes; then the edits stop and every App must settle at its last spec.
 *
 *   node bench/soak.ts [--apps 200] [--minutes 60] [--seed 1] [--nodes 8] [--namespaces 4]
 *                      [--edits-per-minute 30] [--kill-every 300] [--redis-every 420] [--settle 720]
 *                      [--remove-on-complete 500] [--remove-on-fail 200] [--json out.json] [--keep]
 *   node bench/soak.ts --report out.json      (prints the report of a saved run again)
 *
 * Quick check of the program itself: `node bench/soak.ts --apps 20 --minutes 3` (the kill and Redis
 * intervals shrink with a short run). One sandbox (control plane, simulated kubelets with the default fast
 * timings); its own Redis as in the manifests (AOF on, `noeviction`) on a fixed port and data dir, restarted
 * alternately with SIGTERM and SIGKILL; `ebb watcher` and two `ebb worker`s as child processes with the
 * default settings except the job retention (`EBB_QUEUE_REMOVE_ON_COMPLETE`/`_ON_FAIL`, small here so
 * the caps are visible). Reported every sample interval and at the end: RSS (/proc) and V8 heap used
 * (/metrics) of each process, Redis used_memory and key count, the reconcile queue's job counts, warnings
 * and errors of the processes' JSON logs by kind, and the Apps not yet converged. Exit status 1 when an App
 * did not converge within `--settle` seconds, a process crashed, memory grew (judged on runs of 20 minutes
 * or more) or more jobs were kept than the retention settings allow.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../src/common/log.ts';
import { sleep } from '../src/common/wait.ts';
import { redisConnection } from '../src/queue/connection.ts';
import { parseQueueConfig } from '../src/queue/settings.ts';
import { createReconcileQueue, createTimersQueue } from '../src/queue/queues.ts';
import { KubeRest, loadKubeConfig } from '../src/kube/rest.ts';
import { startSandbox } from '../harness/sandbox/sandbox.ts';
import { startSoakRedis } from './lib/soak-redis.ts';
import { ErrorTally } from './lib/soak-procs.ts';
import { Fleet } from './lib/soak-fleet.ts';
import { planApps, podsPerNode, rng } from './lib/soak-apps.ts';
import { createAll, editPhase, editStats, ensureNamespaces, settle, type Timeline } from './lib/soak-phases.ts';
import { sampleLine, sampleMemory, sampleQueue, sampleRedis, type Sample } from './lib/soak-report.ts';
import { finalReport, type SoakResult } from './lib/soak-final.ts';

const { values: opt } = parseArgs({
  options: {
    apps: { type: 'string', default: '200' },
    minutes: { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    nodes: { type: 'string', default: '8' },
    namespaces: { type: 'string', default: '4' },
    'edits-per-minute': { type: 'string', default: '30' },
    'kill-every': { type: 'string' },
    'redis-every': { type: 'string' },
    settle: { type: 'string', default: '720' },
    'remove-on-complete': { type: 'string', default: '500' },
    'remove-on-fail': { type: 'string', default: '200' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
    report: { type: 'string' },
  },
});
const MINUTES = Number(opt.minutes);
const EDIT_MS = MINUTES * 60_000;
const KILL_MS = opt['kill-every'] ? Number(opt['kill-every']) * 1000 : Math.min(300_000, EDIT_MS / 4);
const REDIS_MS = opt['redis-every'] ? Number(opt['redis-every']) * 1000 : Math.min(420_000, EDIT_MS / 3);
const SAMPLE_MS = Math.min(60_000, EDIT_MS / 10);

const say = (msg: string): void => void process.stdout.write(`[${new Date().toISOString()}] ${msg}\n`);

/** The environment of the ebb children: this process's minus any ebb setting, plus the soak's. */
function childEnv(kubeconfig: string, redisUrl: string, prefix: string, namespaces: string[]): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('EBB_') && k !== 'KUBECONFIG' && k !== 'NODE_OPTIONS') base[k] = v;
  return {
    ...base,
    KUBECONFIG: kubeconfig,
    EBB_REDIS_URL: redisUrl,
    EBB_QUEUE_PREFIX: prefix,
    EBB_NAMESPACES: namespaces.join(','),
    EBB_HTTP_ADDRESS: '127.0.0.1',
    EBB_HTTP_PORT: '0',
    EBB_SCALER: 'false',
    EBB_BOARD: 'false',
    EBB_LOG_LEVEL: 'info',
    EBB_QUEUE_REMOVE_ON_COMPLETE: opt['remove-on-complete'],
    EBB_QUEUE_REMOVE_ON_FAIL: opt['remove-on-fail'],
  };
}

async function main(): Promise<number> {
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  const signal = abort.signal;
  const dir = await mkdtemp(join(tmpdir(), 'ebb-soak-'));
  const started = new Date();
  const loadStart = loadavg();
  say(
    `soak: ${opt.apps} Apps, ${MINUTES} min of edits (${opt['edits-per-minute']}/min), worker SIGKILL every ${KILL_MS / 1000} s, Redis restart every ${REDIS_MS / 1000} s, seed ${opt.seed}; load ${loadStart.map((n) => n.toFixed(2)).join(' ')}; dir ${dir}`,
  );
  const sb = await startSandbox({ dir, nodes: Number(opt.nodes), log: createLogger('soak', 'warn'), signal });
  const redis = await startSoakRedis(dir, signal);
  const rest = new KubeRest(loadKubeConfig(sb.kubeconfig));
  const namespaces = Array.from({ length: Number(opt.namespaces) }, (_, i) => `soak-${i}`);
  const prefix = '{ebb-soak}';
  const tally = new ErrorTally();
  const fleet = new Fleet(dir, childEnv(sb.kubeconfig, redis.url, prefix, namespaces), tally);
  const admin = redisConnection(redis.url, { forWorker: false, name: 'soak-admin' });
  const qcfg = parseQueueConfig({ EBB_REDIS_URL: redis.url, EBB_QUEUE_PREFIX: prefix });
  const reconcileQ = createReconcileQueue(admin, qcfg);
  const timersQ = createTimersQueue(admin, qcfg);
  reconcileQ.on('error', () => undefined); // Redis is restarted on purpose
  timersQ.on('error', () => undefined);
  const samples: Sample[] = [];
  const timeline: Timeline = { events: [] };
  let editStart = Date.now();
  const sample = async (notConverged?: number): Promise<Sample> => {
    const s: Sample = {
      at: Date.now(),
      minute: (Date.now() - editStart) / 60_000,
      memory: await sampleMemory(fleet.live()),
      redis: await sampleRedis(admin),
      queue: await sampleQueue(reconcileQ, timersQ),
      errors: tally.total(),
      notConverged,
      load: loadavg()[0]!,
    };
    say(sampleLine(s));
    return s;
  };
  let code = 1;
  try {
    await ensureNamespaces(rest, namespaces, signal);
    await fleet.start(signal);
    const boot = await sample();
    const apps = planApps(Number(opt.apps), namespaces, rng(Number(opt.seed)));
    const created = await createAll(rest, apps, say, signal);
    const warm = await sample(0);
    editStart = Date.now();
    samples.push({ ...warm, minute: 0 });
    await editPhase(
      { rest, apps, fleet, redis, timeline, samples, sample, say, signal },
      {
        editMs: EDIT_MS,
        killMs: KILL_MS,
        redisMs: REDIS_MS,
        sampleMs: SAMPLE_MS,
        editsPerMinute: Number(opt['edits-per-minute']),
        seed: Number(opt.seed),
      },
    );
    const settled = await settle(rest, apps, Number(opt.settle) * 1000, say, signal);
    const pods = await podsPerNode(rest, namespaces);
    await fleet.reapCrashes(signal);
    // A quiet minute after the last change, so the end sample is not caught mid-burst.
    await sleep(Math.min(60_000, SAMPLE_MS), signal);
    const end = await sample(settled.remaining.size);
    samples.push(end);
    const result = finalReport({
      meta: {
        command: `node bench/soak.ts ${process.argv.slice(2).join(' ')}`.trim(),
        started: started.toISOString(),
        finished: new Date().toISOString(),
        load: { start: loadStart, end: loadavg() },
        apps: apps.length,
        minutes: MINUTES,
        seed: Number(opt.seed),
        removeOnComplete: Number(opt['remove-on-complete']),
        removeOnFail: Number(opt['remove-on-fail']),
      },
      created,
      pods,
      boot,
      samples,
      timeline: timeline.events,
      kills: fleet.kills,
      crashes: fleet.crashes,
      edits: editStats,
      errors: Object.fromEntries(tally.counts),
      errorExamples: Object.fromEntries(tally.firstSeen),
      settle: { ms: settled.ms, resumed: settled.resumed, remaining: Object.fromEntries(settled.remaining) },
    });
    process.stdout.write(result.text);
    if (opt.json) await writeFile(opt.json, JSON.stringify(result.json, null, 1));
    code = result.ok ? 0 : 1;
  } finally {
    await fleet.stop().catch(() => undefined);
    await reconcileQ.close().catch(() => undefined);
    await timersQ.close().catch(() => undefined);
    admin.disconnect();
    await redis.stop();
    await sb.stop();
    if (!opt.keep && code === 0) await rm(dir, { recursive: true, force: true });
    else say(`kept ${dir} (logs/ has every process's JSON log)`);
  }
  return code;
}

if (opt.report) {
  const result = finalReport(JSON.parse(await readFile(opt.report, 'utf8')) as SoakResult);
  process.stdout.write(result.text);
  process.exitCode = result.ok ? 0 : 1;
} else {
  process.exitCode = await main();
}
