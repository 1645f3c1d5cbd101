import { randomBytes } from 'node:crypto';
import { mkdir, access } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { sleep, waitFor } from '../../src/common/wait.ts';
import type { Logger } from '../../src/common/log.ts';
import { KubeRest, loadKubeConfig } from '../../src/kube/rest.ts';
import { ensurePki, type Pki } from './pki.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { startChild, type Child } from './process.ts';
import { freePort } from './ports.ts';
import { restartOrder, type RestartTarget } from './faults.ts';

/** kube-controller-manager controllers the sandbox runs by default. */
export const DEFAULT_CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'persistentvolume-binder-controller',
  // Admission puts protection finalizers on every PVC and PV; without these a deleted claim never goes.
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  'root-ca-certificate-publisher-controller',
  // Namespace quotas are enforced by admission only once this controller has computed their usage.
  'resourcequota-controller',
];

export interface ControlPlaneOptions {
  dir: string;
  binDir: string;
  log: Logger;
  signal?: AbortSignal | undefined;
  /** Extra kube-controller-manager controllers, e.g. `statefulset-controller` for comparisons. */
  extraControllers?: string[];
  /**
   * kube-controller-manager's client limits toward the apiserver (`--kube-api-qps`, `--kube-api-burst`);
   * unset: its defaults (20 QPS, burst 30).
   */
  controllerManagerClientLimits?: { qps: number; burst: number } | undefined;
  /** Serve the apiserver's `/debug/pprof` (its `--profiling`; off by default, as the sandbox needs none). */
  apiserverProfiling?: boolean | undefined;
}

export interface ControlPlane {
  server: string;
  kubeconfig: string;
  pki: Pki;
  children: Child[];
  rest: KubeRest;
  /** etcd's client URL (its HTTP/JSON gateway serves /v3/kv/* for fault injection such as compaction). */
  etcdUrl: string;
  /** Stops kube-apiserver and starts it again with the same flags and port; resolves when ready. */
  restartApiserver(): Promise<void>;
  /**
   * Stops `targets` by PID (the scheduler, then the apiserver, then etcd; a server is killed once it stops
   * listening), keeps them down `downMs`, and starts them again with the same flags, ports and etcd data
   * directory (etcd, then the apiserver, then, once the apiserver is ready, the scheduler); resolves once the
   * apiserver answers /readyz again (which needs etcd).
   */
  restart(targets: readonly RestartTarget[], downMs?: number, signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

async function requireBinary(binDir: string, name: string): Promise<string> {
  const path = join(binDir, name);
  await access(path).catch(() => {
    throw new Error(`${path} is missing: run \`make control-plane\` (builds the control plane from Go modules) or set KUBEBUILDER_ASSETS`);
  });
  return path;
}

function logExit(child: Child, log: Logger): void {
  void child.exited.then((how) => log.debug({ child: child.name, pid: child.pid, how }, 'process exited'));
}

interface Command {
  name: RestartTarget;
  binary: string;
  args: string[];
  log: string;
}

const run = (c: Command): Child => startChild(c.name, c.binary, c.args, c.log);

/** The port a restartable server listens on for its clients. */
const portOf = (url: string): number => Number(new URL(url).port);

async function etcdCommand(opts: ControlPlaneOptions): Promise<{ command: Command; url: string }> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const dataDir = join(opts.dir, 'etcd');
  const command: Command = {
    name: 'etcd',
    binary: await requireBinary(opts.binDir, 'etcd'),
    args: [
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
      '--quota-backend-bytes=4294967296',
      '--log-level=warn',
    ],
    log: join(opts.dir, 'logs', 'etcd.log'),
  };
  return { command, url };
}

function apiserverArgs(opts: ControlPlaneOptions, pki: Pki, etcdUrl: string, port: number): string[] {
  return [
    `--etcd-servers=${etcdUrl}`,
    `--etcd-prefix=/ebb-${randomBytes(4).toString('hex')}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--tls-cert-file=${pki.serverCert}`,
    `--tls-private-key-file=${pki.serverKey}`,
    `--client-ca-file=${pki.caCert}`,
    // Logs and exec on real nodes: the kubelet's serving certificate is checked against the sandbox CA, and
    // the node is reached at its InternalIP (its hostname resolves nowhere).
    `--kubelet-client-certificate=${pki.kubeletClient.cert}`,
    `--kubelet-client-key=${pki.kubeletClient.key}`,
    `--kubelet-certificate-authority=${pki.caCert}`,
    '--kubelet-preferred-address-types=InternalIP',
    `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=Node,RBAC',
    '--endpoint-reconciler-type=none',
    '--allow-privileged=true',
    `--profiling=${opts.apiserverProfiling === true}`,
    `--cert-dir=${join(opts.dir, 'pki', 'serving')}`,
    '--v=1',
  ];
}

async function componentCommand(
  opts: ControlPlaneOptions,
  name: 'kube-controller-manager' | 'kube-scheduler',
  kubeconfig: string,
  extra: string[],
): Promise<{ binary: string; args: string[]; log: string }> {
  const port = await freePort();
  return {
    binary: await requireBinary(opts.binDir, name),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      '--leader-elect=false',
      '--v=1',
      ...extra,
    ],
    log: join(opts.dir, 'logs', `${name}.log`),
  };
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Stops a server for a restart: SIGTERM, then SIGKILL as soon as it no longer accepts connections on `port`.
 * Both etcd and kube-apiserver stop listening at once, then wait for their open streams to drain (the
 * apiserver up to its request timeout, a minute, past the 10 s stop deadline): those streams are cut when the
 * process ends either way, and the wait only stretched the outage far past the down time the caller asked for.
 */
async function stopListening(child: Child, port: number, signal?: AbortSignal): Promise<void> {
  const closed = waitFor(async () => ((await accepts(port)) ? undefined : true), {
    timeoutMs: 10_000,
    intervalMs: 50,
    ...(signal ? { signal } : {}),
    what: `${child.name} to stop listening on ${port}`,
  });
  await child.stop(10_000, closed);
}

function clientLimitArgs(limits: ControlPlaneOptions['controllerManagerClientLimits']): string[] {
  return limits ? [`--kube-api-qps=${limits.qps}`, `--kube-api-burst=${limits.burst}`] : [];
}

/**
 * Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler on loopback with free ports,
 * writes `<dir>/kubeconfig` (admin), and waits until the apiserver is ready.
 */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  await mkdir(join(opts.dir, 'logs'), { recursive: true });
  const pki = await ensurePki(opts.dir);
  const children: Child[] = [];
  const stop = async (): Promise<void> => {
    for (const child of [...children].reverse()) await child.stop();
  };
  try {
    const etcd = await etcdCommand(opts);
    children.push(run(etcd.command));
    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;
    const api: Command = {
      name: 'kube-apiserver',
      binary: await requireBinary(opts.binDir, 'kube-apiserver'),
      args: apiserverArgs(opts, pki, etcd.url, port),
      log: join(opts.dir, 'logs', 'kube-apiserver.log'),
    };
    children.push(run(api));
    for (const c of children) logExit(c, opts.log);
    const kubeconfig = join(opts.dir, 'kubeconfig');
    await writeKubeconfig(kubeconfig, server, pki.caCert, pki.clients.admin, 'admin');
    const rest = new KubeRest(loadKubeConfig(kubeconfig));
    await waitReady(rest, children, opts.signal);
    const kcmConfig = join(opts.dir, 'kube-controller-manager.kubeconfig');
    const schedConfig = join(opts.dir, 'kube-scheduler.kubeconfig');
    await writeKubeconfig(kcmConfig, server, pki.caCert, pki.clients['controller-manager'], 'system:kube-controller-manager');
    await writeKubeconfig(schedConfig, server, pki.caCert, pki.clients.scheduler, 'system:kube-scheduler');
    const controllers = [...DEFAULT_CONTROLLERS, ...(opts.extraControllers ?? [])].join(',');
    const kcm = await componentCommand(opts, 'kube-controller-manager', kcmConfig, [
      `--controllers=${controllers}`,
      `--service-account-private-key-file=${pki.saKey}`,
      `--root-ca-file=${pki.caCert}`,
      '--use-service-account-credentials=true',
      '--concurrent-statefulset-syncs=5',
      ...clientLimitArgs(opts.controllerManagerClientLimits),
    ]);
    children.push(startChild('kube-controller-manager', kcm.binary, kcm.args, kcm.log));
    // Default flags: the default StorageClass binds WaitForFirstConsumer, so a pod never waits in the
    // unschedulable pool for a claim the binder has yet to bind (docs/decisions/sandbox.md, "Sandbox scheduler").
    const scheduler: Command = { name: 'kube-scheduler', ...(await componentCommand(opts, 'kube-scheduler', schedConfig, [])) };
    children.push(run(scheduler));
    const commands = { etcd: etcd.command, 'kube-apiserver': api, 'kube-scheduler': scheduler };
    const listensOn: Partial<Record<RestartTarget, number>> = { etcd: portOf(etcd.url), 'kube-apiserver': port };
    const restart = async (targets: readonly RestartTarget[], downMs = 0, signal?: AbortSignal): Promise<void> => {
      const order = restartOrder(targets);
      const readySignal = signal ? AbortSignal.any([signal, ...(opts.signal ? [opts.signal] : [])]) : opts.signal;
      for (const name of order.stop) {
        const child = children.find((c) => c.name === name);
        const listening = listensOn[name];
        if (child) await (listening === undefined ? child.stop() : stopListening(child, listening, signal));
      }
      if (downMs > 0) await sleep(downMs, signal);
      for (const name of order.start) {
        // The scheduler starts against a ready apiserver: one that still loads its RBAC answers 403, and each
        // failed list grows the scheduler's retry backoff.
        if (name === 'kube-scheduler') await waitReady(rest, children.filter(isServer), readySignal);
        const next = run(commands[name]);
        children.splice(
          children.findIndex((c) => c.name === name),
          1,
          next,
        );
        logExit(next, opts.log);
      }
      await waitReady(rest, children.filter(isServer), readySignal);
    };
    const restartApiserver = (): Promise<void> => restart(['kube-apiserver']);
    return { server, kubeconfig, pki, children, rest, etcdUrl: etcd.url, restartApiserver, restart, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const isServer = (c: Child): boolean => c.name === 'etcd' || c.name === 'kube-apiserver';

async function waitReady(rest: KubeRest, children: Child[], signal?: AbortSignal): Promise<void> {
  const died = new AbortController();
  let dead: string | undefined;
  for (const c of children) {
    void c.exited.then((how) => {
      dead ??= `${c.name} exited (${how}); see ${c.logFile}`;
      died.abort();
    });
  }
  const waitSignal = signal ? AbortSignal.any([signal, died.signal]) : died.signal;
  try {
    await waitFor(async () => ((await rest.request<string>('GET', '/readyz')) === 'ok' ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 250,
      signal: waitSignal,
      what: 'kube-apiserver /readyz',
    });
  } catch (err) {
    if (dead) throw new Error(dead);
    throw err;
  }
}
