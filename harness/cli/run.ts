import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { appRef } from '../../src/api/group.ts';
import { processEnv } from '../../src/cli/config.ts';
import { runningBanner, startAll } from '../../src/cli/run.ts';
import { logCrashes, stopOrGiveUp, untilSignal } from '../../src/cli/signals.ts';
import { daemonBanner } from '../sandbox/daemons.ts';
import { PROJECT_ROOT } from '../sandbox/paths.ts';
import { REAL_NODE_LABEL } from '../sandbox/real-node/kubelet.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { DAEMONS_OPTION, devLogger, startLocalCluster } from './local.ts';
import { SANDBOX_OPTIONS, sandboxArgs } from './sandbox-options.ts';

interface RunArgs {
  dir: string;
  nodes: number;
  realNodes: number;
  sample: boolean;
  daemons: boolean;
}

function parseRunArgs(args: string[]): RunArgs {
  const { values } = parseArgs({
    args,
    allowNegative: true,
    options: {
      all: { type: 'boolean', default: false },
      ...SANDBOX_OPTIONS,
      sample: { type: 'boolean', default: false },
      ...DAEMONS_OPTION,
    },
  });
  const sandbox = sandboxArgs(values);
  if (!values.all) throw new Error('only `run --all` is supported: it runs the watcher and a worker in one process');
  return { ...sandbox, sample: values.sample, daemons: values.daemons };
}

/**
 * The sandbox serves Bull Board behind a login as a cluster does: unless the environment names credentials (or
 * switches the board off), a user and a password are made up for this run and printed with the address.
 */
export function sandboxBoardLogin(env: Record<string, string | undefined>): string[] {
  if (env['EBB_BOARD'] === 'false' || env['EBB_BOARD_TOKEN'] || env['EBB_BOARD_USER'] || env['EBB_BOARD_PASSWORD']) return [];
  env['EBB_BOARD_USER'] = 'ebb';
  // 32 random bytes (43 characters): the board refuses a password shorter than 32 bytes.
  env['EBB_BOARD_PASSWORD'] = randomBytes(32).toString('base64url');
  return [`  Bull Board login: ebb / ${env['EBB_BOARD_PASSWORD']} (made up for this run; EBB_BOARD_USER and EBB_BOARD_PASSWORD choose them)`];
}

interface SampleDoc {
  metadata: { name: string; namespace: string };
  spec: {
    replicas?: number;
    template: { metadata?: { labels?: Record<string, string> }; spec: { containers: { image: string }[]; nodeSelector?: Record<string, string> } };
  };
}

/**
 * With real nodes, the sample App runs there, one pod per real node: pinned to them by their label, spread by
 * hostname (at most one pod of skew), on the sandbox registry's HTTP server image (`curl <pod IP>:8080`
 * answers v1; changing the image to `:v2` restarts the container in place, after each node pre-pulled it).
 */
export function sampleForRealNode(doc: SampleDoc, registry: string, realNodes = 1): SampleDoc {
  const template = doc.spec.template;
  const containers = template.spec.containers.map((c) => ({ ...c, image: `${registry}/ebb/app:v1` }));
  const nodeSelector = { ...template.spec.nodeSelector, [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value };
  const topologySpreadConstraints = [
    { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: template.metadata?.labels ?? {} } },
  ];
  const spec = { ...template.spec, containers, nodeSelector, topologySpreadConstraints };
  return { ...doc, spec: { ...doc.spec, replicas: realNodes, template: { ...template, spec } } };
}

async function applySample(sandbox: Sandbox): Promise<void> {
  const doc = parse(await readFile(join(PROJECT_ROOT, 'deploy', 'samples', 'app.yaml'), 'utf8')) as SampleDoc;
  const app = sandbox.real ? sampleForRealNode(doc, sandbox.real.registry.host, sandbox.real.nodes.length) : doc;
  await sandbox.rest.apply(appRef(app.metadata.namespace, app.metadata.name), app, 'ebb-sample', true);
}

function sampleNotes(sandbox: Sandbox): string[] {
  const notes = ['  sample App:  kubectl get apps.apps.ebb.dev web -n default'];
  if (!sandbox.real) return notes;
  const image = `${sandbox.real.registry.host}/ebb/app:v2`;
  const names = sandbox.real.nodes.map((n) => n.name).join(', ');
  return [
    ...notes,
    `  one pod on each of ${names}: curl http://<pod IP>:8080/ answers v1; an in-place update to v2:`,
    `    kubectl patch app web -n default --type json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"${image}"}]'`,
    '  pre-warm ahead of the rollout: the image lists each node pulls from, then the kubelets finding v2 already there',
    '    kubectl get imagelists',
    '    kubectl get events -n default --field-selector reason=Pulled   (each: "already present on machine")',
  ];
}

/**
 * `run --all [--dir .sandbox] [--nodes 3] [--real-nodes 0..4] [--sample] [--no-daemons]`: starts a sandbox in
 * --dir (control plane, Redis, simulated nodes, real nodes when asked) with one `ebb daemon` per node, then runs the product's watcher
 * and worker in this process against it (`ebb run --all`). Stops in reverse order on SIGINT/SIGTERM.
 */
export async function runCommand(args: string[]): Promise<number> {
  const opts = parseRunArgs(args);
  const log = devLogger('ebb');
  logCrashes(log);
  const cluster = await startLocalCluster({ dir: opts.dir, nodes: opts.nodes, realNodes: opts.realNodes, daemons: opts.daemons, log });
  const { sandbox } = cluster;
  const env = processEnv();
  env['KUBECONFIG'] = sandbox.kubeconfig;
  env['EBB_REDIS_URL'] = sandbox.redisUrl;
  if (sandbox.real) env['EBB_SANDBOX_REGISTRY'] = sandbox.real.registry.host;
  env['EBB_HTTP_ADDRESS'] ??= '127.0.0.1';
  env['EBB_SCALER_PORT'] ??= '0';
  // Checks against servers on this machine: the sandbox allows loopback, which an install never should.
  env['EBB_CHECK_NETWORKS'] ??= 'local';
  env['EBB_CHECK_ALLOWED_HOSTS'] ??= '*/127.0.0.1,*/localhost';
  const login = sandboxBoardLogin(env);
  const all = await startAll(env, log).catch(async (err: unknown) => {
    await cluster.stop();
    throw err;
  });
  if (opts.sample) await applySample(sandbox);
  const notes = [...login, ...daemonBanner(cluster.daemons, all.host), ...(opts.sample ? sampleNotes(sandbox) : [])];
  process.stdout.write(runningBanner(all, env, notes));
  await untilSignal();
  // Ctrl-C reaches the sandbox's Redis too (one process group), and a worker or watcher closing against a Redis
  // that is gone would wait for ever: give up on them after their deadline and still stop the cluster.
  const givenUp = await stopOrGiveUp(() => all.stop(), all.stopDeadlineMs);
  if (givenUp) log.warn({ reason: givenUp }, 'ebb did not stop cleanly; stopping the sandbox anyway');
  await cluster.stop();
  return 0;
}
