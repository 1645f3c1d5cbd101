import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CriClient, unixEndpoint } from '../../src/cri/client.ts';
import { startDaemon, waitUntil, type Daemon } from './process.ts';
import { containerdBaseConfig } from '../../harness/sandbox/real-node/containerd.ts';

/** Debian's containerd (package `containerd`). */
export const CONTAINERD_BIN = '/usr/bin/containerd';

/**
 * A real containerd with everything under one short temporary directory: root, state, opt, CNI dirs, the
 * config and the socket (unix socket paths must stay under ~100 bytes, hence `/tmp/ebb-cd-XXXXXX`).
 */
export interface Containerd {
  /** The temporary directory; removed by `dispose()`. */
  readonly dir: string;
  readonly socketPath: string;
  /** `unix://<socketPath>`, as a CRI client is given it. */
  readonly endpoint: string;
  /** containerd's own log (stderr), to read when a test fails. */
  readonly logPath: string;
  /**
   * The image calls the CRI plugin received, oldest first, read from its log: `PullImage` always, and
   * `ImageStatus` when started with logLevel `trace`.
   */
  imageRequests(): Promise<CriImageRequest[]>;
  readonly running: boolean;
  /** Stops containerd (SIGTERM by PID), keeping root, state and socket path. */
  stop(): Promise<void>;
  /** Starts containerd again over the same root and socket; resolves when the CRI plugin answers. */
  start(signal: AbortSignal): Promise<void>;
  /** Stops containerd and removes the temporary directory. */
  dispose(): Promise<void>;
}

export interface CriImageRequest {
  method: 'ImageStatus' | 'PullImage';
  image: string;
}

const READY_TIMEOUT_MS = 30_000;

/**
 * The request lines of containerd's CRI plugin (logfmt): `msg="PullImage \"<ref>\""` (info) and
 * `msg="ImageStatus for \"<ref>\""` (trace). Their result lines (`… failed`, `… returns …`) do not match. A
 * reference the CRD admits holds no quote or backslash.
 */
const REQUEST_LINE = /\bmsg="(PullImage|ImageStatus for) \\"([^"\\]*)\\""(?=\s|$)/;

export function parseImageRequests(log: string): CriImageRequest[] {
  const out: CriImageRequest[] = [];
  for (const line of log.split('\n')) {
    const m = REQUEST_LINE.exec(line);
    if (m?.[1] && m[2] !== undefined) out.push({ method: m[1] === 'PullImage' ? 'PullImage' : 'ImageStatus', image: m[2] });
  }
  return out;
}

export interface ContainerdOptions {
  /**
   * containerd's log level (default: its own, info). At `trace` the CRI plugin logs every image call it
   * receives (`ImageStatus for "…"`, `PullImage "…"`), which shows what reached the runtime.
   */
  logLevel?: 'info' | 'debug' | 'trace';
}

/** Starts containerd in a fresh temporary directory; resolves when CRI `Version` answers. */
export async function startContainerd(signal: AbortSignal, opts: ContainerdOptions = {}): Promise<Containerd> {
  const dir = await mkdtemp('/tmp/ebb-cd-');
  try {
    for (const sub of ['root', 'state', 'opt', 'cni/bin', 'cni/conf']) await mkdir(path.join(dir, sub), { recursive: true });
    const socketPath = path.join(dir, 'c.sock');
    const configPath = path.join(dir, 'config.toml');
    await writeFile(configPath, containerdConfig(dir, socketPath));
    const logPath = path.join(dir, 'containerd.log');
    let daemon: Daemon | undefined;

    const start = async (sig: AbortSignal): Promise<void> => {
      if (daemon) throw new Error('containerd is already running');
      const args = ['--config', configPath, ...(opts.logLevel ? ['--log-level', opts.logLevel] : [])];
      const started = await startDaemon(CONTAINERD_BIN, args, { stdout: logPath, stderr: logPath });
      daemon = started;
      void started.exited.then(() => {
        if (daemon === started) daemon = undefined;
      });
      await waitForCri(socketPath, started, logPath, sig);
    };
    const stop = async (): Promise<void> => {
      const d = daemon;
      daemon = undefined;
      await d?.stop();
    };

    await start(signal);
    return {
      dir,
      socketPath,
      endpoint: unixEndpoint(socketPath),
      logPath,
      imageRequests: async () => parseImageRequests(await readFile(logPath, 'utf8')),
      get running() {
        return daemon !== undefined;
      },
      stop,
      start,
      async dispose() {
        await stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Waits until the CRI plugin answers `Version` (the socket accepts connections a little earlier). */
async function waitForCri(socketPath: string, daemon: Daemon, logPath: string, signal: AbortSignal): Promise<void> {
  const client = CriClient.connect(unixEndpoint(socketPath), { callTimeoutMs: 2_000 });
  try {
    const probe = async (): Promise<boolean> => (await client.version({ signal })).runtimeName === 'containerd';
    await waitUntil('containerd CRI', probe, { daemon, timeoutMs: READY_TIMEOUT_MS, signal, logHint: logPath });
  } finally {
    client.close();
  }
}

/**
 * containerd config, version 2: the CRI plugin on the `native` snapshotter (works on any filesystem, needs no
 * kernel module), the snapshotters that need special filesystems or devices disabled, and every path inside
 * `dir`. No CNI config exists: the CRI plugin logs that pod networking is not ready and still serves the
 * image service, which is all these tests use. Registries are not configured: containerd pulls from a
 * loopback registry over plain HTTP by itself.
 */
function containerdConfig(dir: string, socketPath: string): string {
  const q = (s: string): string => JSON.stringify(s);
  return `${containerdBaseConfig(dir, socketPath)}
[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "native"

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = ${q(path.join(dir, 'cni', 'bin'))}
  conf_dir = ${q(path.join(dir, 'cni', 'conf'))}
`;
}
