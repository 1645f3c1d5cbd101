/**
 * The attack on quarantine: an attacker's App whose reconcile kills its worker, beside another tenant's busy Apps.
 * Workers are real child processes (`ebb worker`), SIGKILLed whenever the attacker's reconcile runs in them (as an
 * App that OOM-kills its worker would); the first kill lands while the other tenant's reconciles run in the same
 * worker. Only the attacker's key is held; the other tenant's Apps are never held and settle; the attacker's spec
 * edits do not lift its hold; its retry (alone, after the back-off) is killed again and holds it longer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { formatKey, type ObjectKey } from '../../../src/queue/names.ts';
import { redisQuarantine } from '../../../src/queue/quarantine.ts';
import { createReconcileQueue, type ReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { freshNamespace } from '../support.ts';
import { heldRunsSince, inFlight } from './quarantine-support.ts';
import { controllerEnv, createApp, eventsOf, getApp, patchApp, settled, template, uniqueName } from './harness.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

let attackerNs = '';
let victimNs = '';
let env: Record<string, string> = {};
let watcher: RunningWatcher | undefined;
let worker: ChildProcess | undefined;
let conn: ReturnType<typeof redisConnection> | undefined;
let queue: ReconcileQueue | undefined;

function spawnWorker(): ChildProcess {
  return spawn(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'worker'], { env: { ...process.env, ...env }, stdio: 'ignore' });
}

function kill(child: ChildProcess | undefined): void {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
}

beforeAll(async () => {
  attackerNs = await freshNamespace('q-attacker');
  victimNs = await freshNamespace('q-victim');
  env = controllerEnv(`${attackerNs},${victimNs}`, {
    EBB_LOG_LEVEL: 'error',
    // A killed worker's jobs are retried once their lock expires: keep that short.
    EBB_QUEUE_LOCK_DURATION: '5s',
    EBB_QUARANTINE_RETRY_AFTER: '3s',
    EBB_RESYNC_PERIOD: '10s',
  });
  conn = redisConnection(parseQueueConfig(env).redis, { forWorker: false });
  queue = createReconcileQueue(conn, parseQueueConfig(env));
  watcher = await startWatcher(parseWatcherConfig(env), createLogger('it-quarantine-culprit', 'warn'));
  worker = spawnWorker();
}, 60_000);

afterAll(async () => {
  kill(worker);
  await watcher?.stop();
  await queue?.close();
  conn?.disconnect();
});

describe('an App whose reconcile kills its worker, beside another tenant', () => {
  it('holds only the attacker; the other tenant is never held and settles; spec edits do not lift the hold', async () => {
    const redis = conn as NonNullable<typeof conn>;
    const prefix = parseQueueConfig(env).prefix;
    const store = redisQuarantine(redis, prefix);
    const victims = ['a', 'b', 'c'].map((n) => uniqueName(`victim-${n}`));
    for (const v of victims) await createApp(victimNs, v, { replicas: 3, template: template(v, 'v1') });
    for (const v of victims) await settled(victimNs, v, undefined, 90_000);

    const attacker: ObjectKey = { kind: 'App', namespace: attackerNs, name: uniqueName('attacker') };
    const attackerId = formatKey(attacker);
    const victimIds = new Set(victims.map((name) => formatKey({ kind: 'App', namespace: victimNs, name })));
    const kills: { alone: boolean; coRunners: number }[] = [];
    /** A wait's failure, with the kills, the hold and the runs in flight when it gave up. */
    const withState = async (err: unknown): Promise<never> => {
      const state = { kills, record: await store.get(attackerId), inFlight: await inFlight(redis, prefix).then((f) => [...f.runs, ...f.alone]) };
      throw new Error(`${err instanceof Error ? err.message : String(err)}; ${JSON.stringify(state)}`);
    };
    let stop = false;

    // The attacker's reconcile "kills its worker": whenever it runs, alone (a new alone mark) or beside a victim's
    // reconcile (its first run, not a suspect), the worker process dies and a new one starts. Runs that end held
    // never reach the reconciler; a suspect waiting for its turn does not run yet.
    const created = { at: Number.POSITIVE_INFINITY };
    const killer = (async () => {
      // A dead run's marks stay behind: only a new mark (one more run begun, or run alone) is a run going on.
      let lastAlone = 0;
      let lastRuns = 0;
      while (!stop) {
        await sleep(20);
        const { runs, alone } = await inFlight(redis, prefix);
        const aloneNow = alone.get(attackerId) ?? 0;
        const runsNow = runs.get(attackerId) ?? 0;
        if (aloneNow === 0) lastAlone = 0;
        if (runsNow === 0) lastRuns = 0;
        const coRunners = [...runs.keys()].filter((k) => victimIds.has(k)).length;
        const runningAlone = aloneNow > lastAlone;
        // Its first run beside a victim's (after a while, beside anything: the test must go on).
        const beside =
          runsNow === 1 &&
          lastRuns === 0 &&
          alone.size === 0 &&
          (coRunners > 0 || Date.now() - created.at > 10_000) &&
          (await store.get(attackerId)) === undefined;
        if (!runningAlone && !beside) continue;
        lastAlone = aloneNow;
        lastRuns = runsNow;
        kills.push({ alone: runningAlone, coRunners });
        kill(worker);
        worker = spawnWorker();
      }
    })();
    // The attacker keeps editing its spec, and the other tenant's Apps change at the same moments (their
    // reconciles run beside the attacker's).
    let victimsBusy = true;
    const editor = (async () => {
      for (let i = 0; !stop; i++) {
        if (created.at !== Number.POSITIVE_INFINITY) await patchApp(attackerNs, attacker.name, { minReadySeconds: i % 5 });
        if (victimsBusy) for (const v of victims) await patchApp(victimNs, v, { minReadySeconds: i % 3 });
        await sleep(1_000);
      }
    })();

    try {
      for (const v of victims) await patchApp(victimNs, v, { template: template(v, 'v2') });
      await createApp(attackerNs, attacker.name, { replicas: 1, template: template(attacker.name, 'v1') });
      created.at = Date.now();

      // Held, retried alone after the back-off, killed again: held a second time, longer.
      const twice = await waitFor(async () => ((await store.get(attackerId))?.strikes ?? 0) >= 2 || undefined, {
        timeoutMs: 240_000,
        intervalMs: 200,
        what: 'the attacker held a second time',
      }).catch(withState);
      expect(twice).toBe(true);
      expect(
        kills.some((k) => !k.alone && k.coRunners > 0),
        `a kill beside the other tenant: ${JSON.stringify(kills)}`,
      ).toBe(true);
      expect(kills.filter((k) => k.alone).length, 'kills while alone: 3 to hold, 1 retry').toBeGreaterThanOrEqual(4);

      victimsBusy = false;
      for (const v of victims) await patchApp(victimNs, v, { template: template(v, 'v3') });
      for (const v of victims) {
        const s = await settled(victimNs, v, undefined, 90_000);
        expect(s.pods.every((p) => p.spec?.containers[0]?.image?.endsWith(':v3'))).toBe(true);
      }

      // The attacker's edits go on; its jobs end held and the hold stays.
      // An edit is handled once the attacker's key runs again: at once while it is held, but after a killed retry
      // only once the dead run's lock has expired and a new worker has started, and a retry may be due first (the
      // hold's delay doubles with each strike). The bound covers that chain; the wait ends at the first held run.
      const since = Date.now();
      await waitFor(async () => ((await heldRunsSince(queue as ReconcileQueue, attacker, since)) > 0 ? true : undefined), {
        timeoutMs: 120_000,
        intervalMs: 200,
        what: 'an edit of the attacker handled, held',
      }).catch(withState);
      expect((await store.get(attackerId))?.strikes).toBeGreaterThanOrEqual(2);
      const app = await getApp(attackerNs, attacker.name);
      expect(app.metadata.generation, 'edited while held').toBeGreaterThan(2);
      expect(app.status?.conditions?.find((c) => c.type === ConditionType.quarantined)).toMatchObject({ status: 'True' });

      expect([...(await store.list()).keys()], 'only the attacker is held').toEqual([attackerId]);
      for (const v of victims) {
        const a = await getApp(victimNs, v);
        expect(
          a.status?.conditions?.find((c) => c.type === ConditionType.quarantined),
          `${v} never held`,
        ).toBeUndefined();
        expect(await eventsOf(victimNs, v, EventReason.quarantined)).toEqual([]);
      }
    } finally {
      stop = true;
      await killer;
      await editor;
    }
  }, 480_000);
});
