/**
 * A real node's containerd (Debian's, 1.6): its own config, root, state, runc root and socket in the node's
 * directory; CRI with the sandbox's pause image, CNI from the node's own config dir and Debian's plugins,
 * cgroupfs (no systemd), and `restrict_oom_score_adj` (root here lacks CAP_SYS_RESOURCE, so the -998 score
 * containerd gives pause containers would make every runc create fail).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CriClient, unixEndpoint } from '../../../src/cri/client.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { startChild, type Child } from '../process.ts';

export const CONTAINERD_BIN = '/usr/bin/containerd';
export const CNI_BIN_DIR = '/usr/lib/cni';

export interface ContainerdPaths {
  dir: string;
  socket: string;
  config: string;
  cniConfDir: string;
}

export function containerdPaths(nodeDir: string): ContainerdPaths {
  const dir = join(nodeDir, 'containerd');
  return { dir, socket: join(nodeDir, 'containerd.sock'), config: join(dir, 'config.toml'), cniConfDir: join(nodeDir, 'cni') };
}

/**
 * The part of a containerd 1.6 config (version 2) every containerd the harness starts shares: root, state and
 * opt under `dir`, the snapshotters that need kernel support disabled, the gRPC socket. Ends with a blank line.
 */
export function containerdBaseConfig(dir: string, socket: string): string {
  const q = (s: string): string => JSON.stringify(s);
  return `version = 2
root = ${q(join(dir, 'root'))}
state = ${q(join(dir, 'state'))}
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
]

[grpc]
  address = ${q(socket)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(dir, 'opt'))}
`;
}

/** containerd's config (version 2). Every path is under `paths.dir` except the fixed ones containerd 1.6 always uses. */
export function containerdConfig(paths: ContainerdPaths, sandboxImage: string): string {
  const q = (s: string): string => JSON.stringify(s);
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `${containerdBaseConfig(paths.dir, paths.socket)}
[${cri}]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  sandbox_image = ${q(sandboxImage)}
  restrict_oom_score_adj = true
  enable_selinux = false

[${cri}.containerd]
  snapshotter = "native"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = ${q(join(paths.dir, 'runc'))}

[${cri}.cni]
  bin_dir = ${q(CNI_BIN_DIR)}
  conf_dir = ${q(paths.cniConfDir)}
  max_conf_num = 1
`;
}

/**
 * The pod network: a bridge the sandbox created beforehand, host-local addresses from the node's /24 (its
 * state in the node's dir), no gateway and no masquerade — pods reach the host and each other, nothing else.
 * `routes` (the other real nodes' subnets, via the bridge address) let pods reach pods of the other nodes
 * through the host; there is no default route.
 */
export function cniConfig(network: string, bridge: string, subnet: string, ipamDir: string, routes: { dst: string; gw: string }[] = []): string {
  return JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: network,
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: false,
          ipMasq: false,
          hairpinMode: false,
          ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir: ipamDir, ...(routes.length > 0 ? { routes } : {}) },
        },
      ],
    },
    null,
    2,
  );
}

/**
 * The command that runs `binary` inside the mount namespace held at `nsFile` (nsenter execs it: the PID is the
 * binary's), or the binary itself when there is none.
 */
export function inNamespace(nsFile: string | undefined, binary: string, args: string[]): [string, string[]] {
  return nsFile ? ['nsenter', [`--mount=${nsFile}`, binary, ...args]] : [binary, args];
}

export interface RealContainerd {
  child: Child;
  socket: string;
}

/** Writes the config and starts containerd; resolves when its CRI plugin answers `Version`. */
export async function startRealContainerd(opts: {
  paths: ContainerdPaths;
  sandboxImage: string;
  cni: string;
  logDir: string;
  name: string;
  /** The ns file of the node's mount namespace: containerd (and so its shims and containers) runs in it. */
  mountNamespace?: string | undefined;
  signal?: AbortSignal | undefined;
}): Promise<RealContainerd> {
  const { paths } = opts;
  for (const sub of ['root', 'state', 'opt', 'runc']) await mkdir(join(paths.dir, sub), { recursive: true });
  await mkdir(paths.cniConfDir, { recursive: true });
  await writeFile(join(paths.cniConfDir, '10-ebb.conflist'), opts.cni);
  await writeFile(paths.config, containerdConfig(paths, opts.sandboxImage));
  const logFile = join(opts.logDir, `containerd-${opts.name}.log`);
  const [command, args] = inNamespace(opts.mountNamespace, CONTAINERD_BIN, ['--config', paths.config]);
  const child = startChild(`containerd ${opts.name}`, command, args, logFile);
  let exited: string | undefined;
  void child.exited.then((how) => (exited = how));
  const client = CriClient.connect(unixEndpoint(paths.socket), { callTimeoutMs: 2_000 });
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`containerd exited (${exited}); see ${logFile}`);
        return (await client.version({ signal: opts.signal ?? AbortSignal.timeout(30_000) })).runtimeName === 'containerd' ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, signal: opts.signal, what: `containerd of ${opts.name}` },
    );
  } catch (err) {
    await child.stop();
    throw err;
  } finally {
    client.close();
  }
  return { child, socket: paths.socket };
}
