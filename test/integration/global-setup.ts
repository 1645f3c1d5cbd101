/**
 * Starts the sandboxes (real etcd, kube-apiserver, kube-controller-manager, kube-scheduler, redis-server and
 * simulated nodes) of the integration run, one per worker of a project, and provides their coordinates to the
 * tests: a file runs on the sandbox of its worker (`VITEST_POOL_ID`, test/integration/support.ts), so no two files
 * ever share a sandbox at the same moment, and a file may restart its components or write cluster-scoped objects.
 *
 * It starts no node daemons (unlike `run --all` and `sandbox up`): the daemon tests run their own daemon for a
 * sandbox node, and two daemons for one node would both pull its images and both write its ImageList status;
 * an idle daemon per node would also cost every run CPU for nothing. Tests that need daemons start them with
 * harness/sandbox/daemons.ts, on nodes of their own (test/integration/imagelist/dedicated-node.ts).
 *
 * Both integration projects (`integration`, two files at a time, and `integration-serial`, one at a time) list
 * this file: vitest runs every project's global setup in its one main process, so a project finds the sandboxes
 * another started (kept on `globalThis`) and starts only those it lacks; the last teardown stops them all.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/common/log.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';
import type { SandboxCoordinates } from './support.ts';

interface Shared {
  /** Index i: the sandbox of worker i + 1. */
  sandboxes: Promise<{ sandbox: Sandbox; dir: string }>[];
  users: number;
}

const KEY = Symbol.for('ebb.integration.sandbox');
const store = globalThis as typeof globalThis & { [KEY]?: Shared };

async function start(): Promise<{ sandbox: Sandbox; dir: string }> {
  // Short base path: unix socket paths of simulated nodes must stay under ~100 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'ebb-it-'));
  const log = createLogger('sandbox', 'warn');
  const started = Date.now();
  // The StatefulSet controller runs too: the upstream-parity tests compare an App with a StatefulSet.
  const sandbox = await startSandbox({ dir, nodes: 3, log, extraControllers: ['statefulset-controller'] });
  process.stdout.write(`sandbox ready in ${Date.now() - started} ms (${dir})\n`);
  return { sandbox, dir };
}

export async function setup(project: TestProject): Promise<void> {
  const shared = (store[KEY] ??= { sandboxes: [], users: 0 });
  shared.users++;
  const workers = project.config.maxWorkers ?? 1;
  while (shared.sandboxes.length < workers) shared.sandboxes.push(start());
  const settled = await Promise.allSettled(shared.sandboxes.slice(0, workers));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) {
    // vitest runs no teardown after a failed setup: stop what did start.
    delete store[KEY];
    await stopAll(shared);
    throw failed.reason;
  }
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const coordinates: SandboxCoordinates[] = started.map(({ sandbox, dir }) => ({
    kubeconfig: sandbox.kubeconfig,
    redisUrl: sandbox.redisUrl,
    dir,
    nodeNames: sandbox.nodeNames,
  }));
  project.provide('sandboxes', JSON.stringify(coordinates));
}

export async function teardown(): Promise<void> {
  const shared = store[KEY];
  if (!shared || --shared.users > 0) return;
  delete store[KEY];
  await stopAll(shared);
}

async function stopAll(shared: Shared): Promise<void> {
  const started = await Promise.allSettled(shared.sandboxes);
  for (const s of started) if (s.status === 'fulfilled') await s.value.sandbox.stop();
}
