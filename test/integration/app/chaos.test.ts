/**
 * Workers killed with SIGKILL at random points of a rollout: the App always converges, no two pods ever
 * share an ordinal, and no pod already at the update revision is ever deleted. Workers run as real child
 * processes (`ebb worker`); the watcher runs in-process. EBB_CHAOS_TRIALS sets the number of trials (the
 * acceptance run uses 20; the default keeps CI short).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Label } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { sleep } from '../../../src/common/wait.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { freshNamespace } from '../support.ts';
import { controllerEnv, createApp, patchApp, revisionOf, settled, template, uniqueName, until, type Snapshot } from './harness.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TRIALS = Number(process.env['EBB_CHAOS_TRIALS'] ?? '4');

let ns = '';
let env: Record<string, string> = {};
let watcher: RunningWatcher | undefined;
const children = new Set<ChildProcess>();

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
  ns = await freshNamespace('app-chaos');
  // A killed worker's job is retried once its lock expires: keep that short.
  env = controllerEnv(ns, {
    EBB_LOG_LEVEL: 'error',
    EBB_QUEUE_LOCK_DURATION: '5s',
    // Workers are killed from outside here, not by the App: quarantine, which cannot tell the two apart, would
    // hold the App after enough kills land on its reconciles in a row. This test is about convergence, not that.
    EBB_QUARANTINE_AFTER: '100',
  });
  watcher = await startWatcher(parseWatcherConfig(env), createLogger('it-chaos', 'warn'));
});

afterAll(async () => {
  for (const c of [...children]) kill(c);
  await watcher?.stop();
});

/** Checks the invariants on every snapshot; remembers pods seen ready at the update revision. */
function invariants(updateRevision: () => string | undefined) {
  const updated = new Set<string>();
  const problems: string[] = [];
  return {
    problems,
    onEach: (s: Snapshot) => {
      const indexes = s.pods.map((p) => p.metadata.labels?.[Label.podIndex]);
      if (new Set(indexes).size !== indexes.length) problems.push(`two pods share an ordinal: ${indexes.join(',')}`);
      for (const uid of updated) {
        const pod = s.pods.find((p) => p.metadata.uid === uid);
        if (!pod || pod.metadata.deletionTimestamp) problems.push(`updated pod ${uid} was deleted`);
      }
      const rev = updateRevision();
      for (const p of s.pods)
        if (rev && revisionOf(p) === rev && !p.metadata.deletionTimestamp && p.status?.phase === 'Running') updated.add(p.metadata.uid ?? '');
    },
  };
}

describe('workers killed during a rollout', () => {
  it.each(Array.from({ length: TRIALS }, (_, i) => [i + 1, i % 2 === 0 ? 'Parallel' : 'OrderedReady'] as const))(
    'trial %d (%s): converges, one pod per ordinal, updated pods never deleted',
    async (_trial, podManagementPolicy) => {
      let workers = [spawnWorker(), spawnWorker()];
      const name = uniqueName('chaos');
      await createApp(ns, name, { replicas: 4, podManagementPolicy, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } });
      await settled(ns, name, undefined, 90_000);
      let v2: string | undefined;
      const inv = invariants(() => v2);
      await patchApp(ns, name, { template: template(name, 'v2') });
      // Three kills at random moments while the rollout runs, each worker replaced at once.
      const killer = (async () => {
        for (let k = 0; k < 3; k++) {
          await sleep(100 + Math.floor(Math.random() * 900));
          const victim = Math.floor(Math.random() * workers.length);
          kill(workers[victim]);
          workers = workers.map((w, i) => (i === victim ? spawnWorker() : w));
        }
      })();
      const done = await until(
        ns,
        name,
        (s) => {
          if (s.app.status?.observedGeneration === 2) v2 = s.app.status.updateRevision;
          return (
            v2 !== undefined &&
            s.pods.length === 4 &&
            s.pods.every((p) => revisionOf(p) === v2 && !p.metadata.deletionTimestamp) &&
            s.app.status?.currentRevision === v2 &&
            s.app.status.readyReplicas === 4
          );
        },
        { timeoutMs: 100_000, onEach: inv.onEach, what: `App ${name} converged after worker kills` },
      );
      await killer;
      expect(inv.problems).toEqual([]);
      expect(done.app.status).toMatchObject({ replicas: 4, updatedReplicas: 4, currentRevision: v2 });
      for (const w of workers) kill(w);
    },
    120_000,
  );
});
