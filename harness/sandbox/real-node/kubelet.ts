/**
 * A real node's kubelet (built from the pinned Kubernetes module with the control plane): a client
 * certificate `system:node:<name>` signed by the sandbox CA, cgroup v1 with cgroupfs under a dedicated
 * cgroupRoot, its API on the node IP (the pod bridge's address, where the apiserver reaches it for logs and
 * exec) with a serving certificate for that IP signed by the sandbox CA and webhook authentication and
 * authorization, and every directory it lets one choose inside the node's directory.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writeKubeconfig } from '../kubeconfig.ts';
import { signedCert, type Pki } from '../pki.ts';
import { freePort } from '../ports.ts';
import { startChild, type Child } from '../process.ts';
import { inNamespace } from './containerd.ts';

/** The label every real node carries (simulated nodes carry `sandbox.ebb.dev/simulated: "true"`). */
export const REAL_NODE_LABEL = { key: 'sandbox.ebb.dev/node', value: 'real' } as const;

export interface KubeletPaths {
  rootDir: string;
  podLogsDir: string;
  config: string;
  kubeconfig: string;
  certDir: string;
  resolvConf: string;
}

/** The serving certificate of the kubelet's API: for the node IP, signed by the sandbox CA. */
export interface ServingCert {
  cert: string;
  key: string;
}

export function kubeletPaths(nodeDir: string): KubeletPaths {
  const dir = join(nodeDir, 'kubelet-conf');
  return {
    rootDir: join(nodeDir, 'kubelet'),
    podLogsDir: join(nodeDir, 'pod-logs'),
    config: join(dir, 'config.yaml'),
    kubeconfig: join(dir, 'kubeconfig'),
    certDir: join(dir, 'pki'),
    resolvConf: join(dir, 'resolv.conf'),
  };
}

export interface KubeletConfigInput {
  paths: KubeletPaths;
  caCert: string;
  containerdSocket: string;
  cgroupRoot: string;
  /** Where the API listens: the node IP. */
  address: string;
  serving: ServingCert;
  port: number;
  healthzPort: number;
}

/** The KubeletConfiguration (kubelet.config.k8s.io/v1beta1) of a real node. */
export function kubeletConfig(input: KubeletConfigInput): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: input.address,
    port: input.port,
    tlsCertFile: input.serving.cert,
    tlsPrivateKeyFile: input.serving.key,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: input.healthzPort,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: input.caCert } },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${input.containerdSocket}`,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: input.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    // Only cgroup v1 hierarchies are usable on these machines; root lacks CAP_SYS_RESOURCE, so no negative score.
    failCgroupV1: false,
    oomScoreAdj: 0,
    failSwapOn: false,
    podLogsDir: input.paths.podLogsDir,
    resolvConf: input.paths.resolvConf,
    // A placeholder: pods with the default DNS policy get it instead of a warning on every sync.
    clusterDNS: ['10.0.0.10'],
    clusterDomain: 'cluster.local',
    makeIPTablesUtilChains: false,
    // Pre-pulled images must stay: no image GC and no disk-pressure eviction on a shared development disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    serializeImagePulls: false,
    shutdownGracePeriod: '0s',
    shutdownGracePeriodCriticalPods: '0s',
  };
}

export interface KubeletStart {
  name: string;
  nodeIP: string;
  labels: Record<string, string>;
  binary: string;
  pki: Pki;
  server: string;
  paths: KubeletPaths;
  containerdSocket: string;
  cgroupRoot: string;
  logDir: string;
  /** The ns file of the node's mount namespace, shared with its containerd. */
  mountNamespace?: string | undefined;
}

/** Writes the kubelet's certificate, kubeconfig and config, and starts it. */
export async function startKubelet(opts: KubeletStart): Promise<{ child: Child; port: number }> {
  const { paths } = opts;
  for (const dir of [paths.rootDir, paths.podLogsDir, paths.certDir]) await mkdir(dir, { recursive: true });
  const client = await signedCert(opts.pki, opts.name, `/O=system:nodes/CN=system:node:${opts.name}`, 'extendedKeyUsage=clientAuth\n');
  await writeKubeconfig(paths.kubeconfig, opts.server, opts.pki.caCert, client, `system:node:${opts.name}`);
  const serving = await signedCert(
    opts.pki,
    `${opts.name}-serving`,
    `/O=system:nodes/CN=system:node:${opts.name}`,
    `subjectAltName=IP:${opts.nodeIP},DNS:${opts.name}\nextendedKeyUsage=serverAuth\n`,
  );
  await writeFile(paths.resolvConf, 'nameserver 127.0.0.1\n');
  const [port, healthzPort] = [await freePort(), await freePort()];
  const config = kubeletConfig({
    paths,
    caCert: opts.pki.caCert,
    containerdSocket: opts.containerdSocket,
    cgroupRoot: opts.cgroupRoot,
    address: opts.nodeIP,
    serving,
    port,
    healthzPort,
  });
  await writeFile(paths.config, stringify(config));
  const labels = Object.entries(opts.labels).map(([k, v]) => `${k}=${v}`);
  const args = [
    `--config=${paths.config}`,
    `--kubeconfig=${paths.kubeconfig}`,
    `--root-dir=${paths.rootDir}`,
    `--cert-dir=${paths.certDir}`,
    `--hostname-override=${opts.name}`,
    `--node-ip=${opts.nodeIP}`,
    `--node-labels=${labels.join(',')}`,
    '--v=1',
  ];
  const [command, argv] = inNamespace(opts.mountNamespace, opts.binary, args);
  const child = startChild(`kubelet ${opts.name}`, command, argv, join(opts.logDir, `kubelet-${opts.name}.log`));
  return { child, port };
}
