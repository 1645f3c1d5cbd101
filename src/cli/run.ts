import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { appRef } from '../api/group.ts';
import { createLogger } from '../common/log.ts';
import { startSandbox, type Sandbox } from '../sandbox/sandbox.ts';
import { PROJECT_ROOT } from '../sandbox/paths.ts';
import { startWatcher } from '../watcher/watcher.ts';
import { reconcilers } from '../workers/reconcilers.ts';
import { startWorker } from '../workers/worker.ts';
import { cliConfig, parseRunConfig, processEnv } from './config.ts';
import { logCrashes, untilSignal } from './signals.ts';

interface RunArgs {
  all: boolean;
  dir: string | undefined;
  nodes: number;
  sample: boolean;
}

function parseRunArgs(args: string[]): RunArgs {
  const { values } = parseArgs({
    args,
    options: {
      all: { type: 'boolean', default: false },
      dir: { type: 'string' },
      nodes: { type: 'string', default: '3' },
      sample: { type: 'boolean', default: false },
    },
  });
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 0 || nodes > 200) throw new Error(`--nodes must be an integer 0..200, got "${values.nodes}"`);
  if (!values.all) throw new Error('only `ebb run --all` is supported: it runs the watcher and a worker in one process');
  return { all: true, dir: values.dir ? resolve(values.dir) : undefined, nodes, sample: values.sample };
}

async function applySample(sandbox: Sandbox): Promise<void> {
  const doc = parse(await readFile(join(PROJECT_ROOT, 'deploy', 'samples', 'app.yaml'), 'utf8')) as { metadata: { name: string; namespace: string } };
  await sandbox.rest.apply(appRef(doc.metadata.namespace, doc.metadata.name), doc, 'ebb-sample', true);
}

/**
 * `ebb run --all`: watcher + worker in one process, for development. With --dir it first starts a sandbox
 * there (control plane, Redis, simulated nodes) and points both at it.
 */
export async function runCommand(args: string[]): Promise<number> {
  const opts = parseRunArgs(args);
  const log = createLogger('ebb', cliConfig().logLevel);
  logCrashes(log);
  const env = processEnv();
  const sandbox = opts.dir ? await startSandbox({ dir: opts.dir, nodes: opts.nodes, log }) : undefined;
  if (sandbox) {
    env['KUBECONFIG'] = sandbox.kubeconfig;
    env['EBB_REDIS_URL'] = sandbox.redisUrl;
    env['EBB_HTTP_ADDRESS'] ??= '127.0.0.1';
    env['EBB_SCALER_PORT'] ??= '0';
  }
  const cfg = parseRunConfig(env);
  const watcher = await startWatcher(cfg.watcher, log.child({ process: 'watcher' }));
  const worker = await startWorker(cfg.worker, log.child({ process: 'worker' }), reconcilers());
  if (sandbox && opts.sample) await applySample(sandbox);
  const host = env['EBB_HTTP_ADDRESS'] === '0.0.0.0' ? '127.0.0.1' : (env['EBB_HTTP_ADDRESS'] ?? '127.0.0.1');
  const lines = [
    'ebb is running',
    sandbox ? `  KUBECONFIG=${sandbox.kubeconfig}` : undefined,
    `  Bull Board:  http://${host}:${watcher.httpPort}/board`,
    `  metrics:     http://${host}:${watcher.httpPort}/metrics (watcher), http://${host}:${worker.httpPort}/metrics (worker)`,
    opts.sample ? '  sample App:  kubectl get apps.apps.ebb.dev web -n default' : undefined,
    '  Ctrl-C stops everything',
  ];
  process.stdout.write(`${lines.filter(Boolean).join('\n')}\n`);
  await untilSignal();
  await worker.stop();
  await watcher.stop();
  await sandbox?.stop();
  return 0;
}
