/**
 * Starts one sandbox (real etcd, kube-apiserver, kube-controller-manager, kube-scheduler, redis-server and
 * simulated nodes) for the whole integration run and provides its coordinates to the tests.
 *
 * It starts no node daemons (unlike `run --all` and `sandbox up`): the daemon tests run their own daemon for a
 * sandbox node, and two daemons for one node would both pull its images and both write its ImageList status;
 * an idle daemon per node would also cost every run CPU for nothing. Tests that need daemons start them with
 * harness/sandbox/daemons.ts, on nodes of their own (test/integration/imagelist/dedicated-node.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/common/log.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';

let sandbox: Sandbox | undefined;

export async function setup(project: TestProject): Promise<void> {
  // Short base path: unix socket paths of simulated nodes must stay under ~100 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'ebb-it-'));
  const log = createLogger('sandbox', 'warn');
  const started = Date.now();
  // The StatefulSet controller runs too: the upstream-parity tests compare an App with a StatefulSet.
  sandbox = await startSandbox({ dir, nodes: 3, log, extraControllers: ['statefulset-controller'] });
  process.stdout.write(`sandbox ready in ${Date.now() - started} ms (${dir})\n`);
  project.provide('kubeconfig', sandbox.kubeconfig);
  project.provide('redisUrl', sandbox.redisUrl);
  project.provide('sandboxDir', dir);
  project.provide('nodeNames', JSON.stringify(sandbox.nodeNames));
}

export async function teardown(): Promise<void> {
  await sandbox?.stop();
}
