/**
 * Starts one sandbox with REAL_NODES real nodes (each a kubelet, containerd and runc in a mount namespace of
 * its own, a CNI bridge; their images in one loopback registry) beside one simulated node, for the whole
 * real-node run, and provides its coordinates. The tests reuse the integration helpers (the same provided
 * keys) and add the real nodes'; most pin their pods to the first.
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

/** Two real nodes: what crosses nodes (pod to pod, logs and exec on each) is tested, and a second costs seconds. */
const REAL_NODES = 2;

export async function setup(project: TestProject): Promise<void> {
  const missing = await missingPrerequisites(DEFAULT_BIN_DIR);
  if (missing.length > 0) throw new Error(`the real-node tests need ${missing.join(', ')}: run \`make tools\` as root`);
  const dir = await mkdtemp(join(tmpdir(), 'ebb-rn-'));
  const log = createLogger('sandbox', 'warn');
  const started = Date.now();
  sandbox = await startSandbox({ dir, nodes: 1, realNodes: REAL_NODES, log });
  const real = sandbox.real;
  if (!real) throw new Error('the sandbox started no real node');
  process.stdout.write(`sandbox with ${real.nodes.length} real nodes ready in ${Date.now() - started} ms (${dir})\n`);
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
