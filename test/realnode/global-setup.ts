/**
 * Starts one sandbox with REAL_NODES real nodes (each a kubelet, containerd and runc in a mount namespace of
 * its own, a CNI bridge; their images in one loopback registry) beside one simulated node, for the whole
 * real-node run, and provides its coordinates. The tests reuse the integration helpers (the same provided
 * keys) and add the real nodes'; most pin their pods to the first.
 *
 * The sandbox stops, and the real nodes' host changes are undone, at the end of the run and also on Ctrl-C
 * (SIGINT or SIGTERM, during the start too): vitest would exit on the signal at once, so its handlers wait
 * until the stop has finished (stop-on-signal.ts). The run's directory is then removed, unless a test failed
 * (kept for the logs) or a change could not be undone.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/common/log.ts';
import { startSandbox } from '../../harness/sandbox/sandbox.ts';
import { DEFAULT_BIN_DIR } from '../../harness/sandbox/paths.ts';
import { stopBeforeExit } from '../../harness/sandbox/stop-on-signal.ts';
import { realHostOps } from '../../harness/sandbox/real-node/host-ops.ts';
import { missingPrerequisites } from '../../harness/sandbox/real-node/real-nodes.ts';
import { removeRunDir } from '../../harness/sandbox/real-node/run-dir.ts';

/** Two real nodes: what crosses nodes (pod to pod, logs and exec on each) is tested, and a second costs seconds. */
const REAL_NODES = 2;

let stop: (() => Promise<void>) | undefined;
let releaseSignals: (() => void) | undefined;

export async function setup(project: TestProject): Promise<void> {
  const missing = await missingPrerequisites(DEFAULT_BIN_DIR);
  if (missing.length > 0) throw new Error(`the real-node tests need ${missing.join(', ')}: run \`make tools\` as root`);
  const dir = await mkdtemp(join(tmpdir(), 'ebb-rn-'));
  const log = createLogger('sandbox', 'warn');
  const started = Date.now();
  const interrupted = new AbortController();
  const starting = startSandbox({ dir, nodes: 1, realNodes: REAL_NODES, log, signal: interrupted.signal });
  let stopping: Promise<void> | undefined;
  stop = () =>
    (stopping ??= (async () => {
      // Read first: on Ctrl-C, the tests the signal then breaks are no failure worth keeping the logs for.
      const state = project.vitest.state;
      const failed = state.getCountOfFailedTests() > 0 || state.getFiles().some((f) => f.result?.state === 'fail');
      // A start that fails or is interrupted stops what it started itself.
      const sandbox = await starting.catch(() => undefined);
      await sandbox?.stop();
      const kept = await removeRunDir(dir, { ops: realHostOps, failed });
      if (kept) process.stdout.write(`real-node sandbox directory ${dir} ${kept}\n`);
    })());
  releaseSignals = stopBeforeExit({
    stop: async (signal) => {
      process.stdout.write(`${signal}: stopping the real nodes and undoing their host changes (Ctrl-\\ quits at once)\n`);
      const t0 = Date.now();
      interrupted.abort(new Error(`interrupted by ${signal}`));
      await stop?.();
      process.stdout.write(`real nodes stopped in ${Date.now() - t0} ms\n`);
    },
  });
  const sandbox = await starting;
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
  await stop?.();
  releaseSignals?.();
}
