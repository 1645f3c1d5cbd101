/**
 * Starts one sandbox (real etcd, kube-apiserver, kube-controller-manager, kube-scheduler, redis-server and
 * simulated nodes) for the whole integration run and provides its coordinates to the tests.
 *
 * It starts no node daemons (unlike `run --all` and `sandbox up`): the daemon tests run their own daemon for a
 * sandbox node, and two daemons for one node would both pull its images and both write its ImageList status;
 * an idle daemon per node would also cost every run CPU for nothing. Tests that need daemons start them with
 * harness/sandbox/daemons.ts, on nodes of their own (test/integration/imagelist/dedicated-node.ts).
 *
 * Both integration projects (`integration`, files in parallel, and `integration-serial`, files alone) list this
 * file: vitest runs every project's global setup in its one main process, so the second finds the sandbox the
 * first started (kept on `globalThis`), and the last teardown stops it.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/common/log.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';

interface Shared {
  sandbox: Promise<{ sandbox: Sandbox; dir: string }>;
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
  const shared = (store[KEY] ??= { sandbox: start(), users: 0 });
  shared.users++;
  const { sandbox, dir } = await shared.sandbox;
  project.provide('kubeconfig', sandbox.kubeconfig);
  project.provide('redisUrl', sandbox.redisUrl);
  project.provide('sandboxDir', dir);
  project.provide('nodeNames', JSON.stringify(sandbox.nodeNames));
  // Files of this project may run at the same moment: each cleans up only what it made (leave-nothing-behind.ts).
  project.provide('filesInParallel', (project.config.maxWorkers ?? 1) > 1);
}

export async function teardown(): Promise<void> {
  const shared = store[KEY];
  if (!shared || --shared.users > 0) return;
  delete store[KEY];
  await (await shared.sandbox).sandbox.stop();
}
