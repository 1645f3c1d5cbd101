/**
 * Workers killed with SIGKILL at random points of the in-place protocol (right after an update starts, after
 * the image patch, after a finish, or at a random moment): the App always converges in place — no pod
 * recreated, none left with the gate False or the state annotation — and while a pod carries the annotation
 * its gate is False, or released (True) once the kubelet has observed the image patch. Workers run as real child processes (`ebb worker`); the watcher runs in-process.
 * EBB_INPLACE_CHAOS_TRIALS sets the number of trials (the acceptance run uses 20; the default keeps CI short).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Reason } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { sleep } from '../../../src/common/wait.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { freshNamespace } from '../support.ts';
import { controllerEnv, createApp, image, patchApp, revisionOf, settled, template, uniqueName, until } from './harness.ts';
import { gateOf, imagesOf, isAnnotated, recordPods, statusesOf, type Seen } from './pod-history.ts';

type Point = 'started' | 'patched' | 'finished' | 'anytime';
const POINTS: Point[] = ['started', 'patched', 'finished', 'anytime'];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TRIALS = Number(process.env['EBB_INPLACE_CHAOS_TRIALS'] ?? '3');

let ns = '';
let env: Record<string, string> = {};
let watcher: RunningWatcher | undefined;
const children = new Set<ChildProcess>();
/** Where the kills of every trial landed, for the summary line. */
const landed: Point[] = [];

function spawnWorker(): ChildProcess {
  const child = spawn(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'worker'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

function kill(child: ChildProcess | undefined): void {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
}

beforeAll(async () => {
  ns = await freshNamespace('ip-chaos');
  // A killed worker's job is retried once its lock expires: keep that short.
  env = controllerEnv(ns, {
    EBB_LOG_LEVEL: 'error',
    EBB_QUEUE_LOCK_DURATION: '5s',
    // Workers are killed from outside here, not by the App: quarantine, which cannot tell the two apart, would
    // hold the App after enough kills land on its reconciles in a row. This test is about convergence, not that.
    EBB_QUARANTINE_AFTER: '100',
  });
  watcher = await startWatcher(parseWatcherConfig(env), createLogger('it-ip-chaos', 'warn'));
});

afterAll(async () => {
  const counts = Object.fromEntries(POINTS.map((p) => [p, landed.filter((l) => l === p).length]));
  process.stdout.write(`in-place chaos: ${TRIALS} trials, kills by protocol point ${JSON.stringify(counts)}\n`);
  for (const c of [...children]) kill(c);
  await watcher?.stop();
});

/** Which protocol point a new pod version shows, compared with the pod's previous version. */
function pointOf(prev: Pod | undefined, next: Pod): Point | undefined {
  if (!prev) return undefined;
  if (!isAnnotated(prev) && isAnnotated(next)) return 'started';
  if (imagesOf(prev)[0] !== imagesOf(next)[0]) return 'patched';
  if (isAnnotated(prev) && !isAnnotated(next)) return 'finished';
  return undefined;
}

/** The gate released (True) while annotated: only once the kubelet has observed the image patch. */
function releasedEarly(pod: Pod): boolean {
  const gate = gateOf(pod);
  const observed = (pod.status?.observedGeneration ?? 0) >= (pod.metadata.generation ?? Infinity);
  return gate?.status === 'True' && gate.reason === Reason.inPlaceContainersRestarting && observed && imagesOf(pod)[0] === image('v2');
}

/** Watches the pods' versions: protocol invariants, and which protocol point a new version shows. */
function protocolWatch() {
  const last = new Map<string, Pod>();
  let waiting: { point: Point; resolve: () => void } | undefined;
  const problems: string[] = [];
  return {
    problems,
    onSeen: (s: Seen) => {
      const name = s.pod.metadata.name ?? '';
      const gate = gateOf(s.pod);
      if (isAnnotated(s.pod) && gate?.status !== 'False' && !releasedEarly(s.pod)) problems.push(`${name} annotated with gate ${gate?.status}/${gate?.reason}`);
      if (s.type === 'DELETED') problems.push(`${name} was deleted`);
      const point = pointOf(last.get(name), s.pod);
      last.set(name, s.pod);
      if (point && waiting?.point === point) waiting.resolve();
    },
    /** Resolves with `point` once the protocol reaches it, or with 'anytime' when it did not within `timeoutMs`. */
    reach: (point: Point, timeoutMs: number): Promise<Point> =>
      point === 'anytime'
        ? Promise.resolve(point)
        : new Promise<Point>((r) => {
            waiting = { point, resolve: () => r(point) };
            setTimeout(() => r('anytime'), timeoutMs);
          }),
  };
}

describe('workers killed during in-place updates', () => {
  it.each(Array.from({ length: TRIALS }, (_, i) => [i + 1, i % 2 === 0 ? 'Parallel' : 'OrderedReady', i % 3 === 2 ? 1 : 0] as const))(
    'trial %d (%s, grace %ds): converges in place, nothing left updating',
    async (_trial, podManagementPolicy, gracePeriodSeconds) => {
      let workers = [spawnWorker(), spawnWorker()];
      const name = uniqueName('ipchaos');
      const rollingUpdate = {
        podUpdatePolicy: 'InPlaceIfPossible',
        maxUnavailable: podManagementPolicy === 'Parallel' ? 2 : 1,
        inPlaceUpdateStrategy: { gracePeriodSeconds },
      };
      await createApp(ns, name, { replicas: 3, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate } } as Partial<AppSpec>);
      const before = await settled(ns, name, undefined, 90_000);
      const watch = protocolWatch();
      const history = await recordPods(ns, name, watch.onSeen);
      await patchApp(ns, name, { template: template(name, 'v2') });
      const kills: Point[] = [];
      const killer = (async () => {
        for (let k = 0; k < 3; k++) {
          const point = await watch.reach(POINTS[Math.floor(Math.random() * POINTS.length)] ?? 'anytime', 4000);
          await sleep(point === 'anytime' ? 100 + Math.floor(Math.random() * 1500) : Math.floor(Math.random() * 300));
          const victim = Math.floor(Math.random() * workers.length);
          kill(workers[victim]);
          kills.push(point);
          workers = workers.map((w, i) => (i === victim ? spawnWorker() : w));
        }
      })();
      const done = await until(
        ns,
        name,
        (s) =>
          s.app.status?.observedGeneration === 2 &&
          s.pods.length === 3 &&
          s.pods.every(
            (p) => revisionOf(p) === s.app.status?.updateRevision && imagesOf(p)[0] === image('v2') && !isAnnotated(p) && gateOf(p)?.status === 'True',
          ) &&
          s.app.status.currentRevision === s.app.status.updateRevision &&
          s.app.status.readyReplicas === 3,
        { timeoutMs: 150_000, what: `App ${name} converged in place after worker kills` },
      );
      await killer;
      await history.stop();
      landed.push(...kills);
      expect(kills).toHaveLength(3);
      expect(watch.problems).toEqual([]);
      expect(done.pods.map((p) => p.metadata.uid)).toEqual(before.pods.map((p) => p.metadata.uid));
      expect(done.pods.every((p) => (statusesOf(p)[0]?.restartCount ?? 0) >= 1)).toBe(true);
      expect(done.pods.every((p) => gateOf(p)?.reason === 'InPlaceUpdateDone')).toBe(true);
      for (const w of workers) kill(w);
    },
    200_000,
  );
});
