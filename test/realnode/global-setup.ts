/**
 * Starts one sandbox with a real node (kubelet, containerd, runc, CNI bridge; its images in a loopback
 * registry) beside one simulated node, for the whole real-node run, and provides its coordinates. The tests
 * reuse the integration helpers (the same provided keys) and add the real node's.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/common/log.ts';
import { startSandbox, type Sandbox } from '../../harness/sandbox/sandbox.ts';
import { DEFAULT_BIN_DIR } from '../../harness/sandbox/paths.ts';
import { missingPrerequisites } from '../../harness/sandbox/real-node/real-nodes.ts';

let sandbox: Sandbox | undefined;

export async function setup(project: TestProject): Promise<void> {
  const missing = await missingPrerequisites(DEFAULT_BIN_DIR);
  if (missing.length > 0) throw new Error(`the real-node tests need ${missing.join(', ')}: run \`make tools\` as root`);
  const dir = await mkdtemp(join(tmpdir(), 'ebb-rn-'));
  const log = createLogger('sandbox', 'warn');
  const started = Date.now();
  sandbox = await startSandbox({ dir, nodes: 1, realNodes: 1, log });
  const real = sandbox.real;
  if (!real) throw new Error('the sandbox started no real node');
  process.stdout.write(`sandbox with a real node ready in ${Date.now() - started} ms (${dir})\n`);
  project.provide('kubeconfig', sandbox.kubeconfig);
  project.provide('redisUrl', sandbox.redisUrl);
  project.provide('sandboxDir', dir);
  project.provide('nodeNames', JSON.stringify(sandbox.nodeNames));
  project.provide('realNodes', JSON.stringify(real.nodes));
  project.provide('registry', real.registry.host);
  project.provide('registryLog', join(dir, 'logs', 'registry.log'));
}

export async function teardown(): Promise<void> {
  await sandbox?.stop();
}
