/**
 * The sandbox's loopback image registry (Debian's docker-registry, distribution 2.8) for its real nodes:
 * blobs in the sandbox dir, plain HTTP on 127.0.0.1 (containerd pulls from loopback registries over HTTP with
 * no configuration), the access log on, so tests can tell which manifests and blobs were fetched.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '../../../src/common/wait.ts';
import { freePort } from '../ports.ts';
import { startChild, type Child } from '../process.ts';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

/** One request line of the registry's access log (Apache combined format). */
export interface AccessLogEntry {
  method: string;
  path: string;
  status: number;
}

export interface SandboxRegistry {
  /** `127.0.0.1:<port>`: the registry part of image references (what EBB_SANDBOX_REGISTRY holds). */
  host: string;
  url: string;
  child: Child;
  /** Every request so far, oldest first. */
  accessLog(): Promise<AccessLogEntry[]>;
  stop(): Promise<void>;
}

const ACCESS_LINE = /"([A-Z]+) (\S+) HTTP\/[\d.]+" (\d{3}) /;

export function parseAccessLog(text: string): AccessLogEntry[] {
  const entries: AccessLogEntry[] = [];
  for (const line of text.split('\n')) {
    const m = ACCESS_LINE.exec(line);
    if (m?.[1] && m[2] && m[3]) entries.push({ method: m[1], path: m[2], status: Number(m[3]) });
  }
  return entries;
}

/** Manifest requests (GET or HEAD) for `repo`, by tag or digest. */
export function manifestRequests(entries: readonly AccessLogEntry[], repo: string): AccessLogEntry[] {
  const prefix = `/v2/${repo}/manifests/`;
  return entries.filter((e) => (e.method === 'GET' || e.method === 'HEAD') && e.path.startsWith(prefix));
}

function registryConfig(storage: string, port: number): string {
  return `version: 0.1
log:
  level: warn
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: ${JSON.stringify(storage)}
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:${port}
  secret: ebb-sandbox-registry
`;
}

/** Starts the registry in `<dir>/registry`; resolves once `/v2/` answers. */
export async function startSandboxRegistry(opts: { dir: string; logDir: string; signal?: AbortSignal | undefined }): Promise<SandboxRegistry> {
  const storage = join(opts.dir, 'registry', 'storage');
  await mkdir(storage, { recursive: true });
  const port = await freePort();
  const config = join(opts.dir, 'registry', 'config.yml');
  await writeFile(config, registryConfig(storage, port));
  const logFile = join(opts.logDir, 'registry.log');
  const child = startChild('docker-registry', REGISTRY_BIN, ['serve', config], logFile);
  const url = `http://127.0.0.1:${port}`;
  let exited: string | undefined;
  void child.exited.then((how) => (exited = how));
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`docker-registry exited (${exited}); see ${logFile}`);
        const res = await fetch(`${url}/v2/`);
        await res.body?.cancel();
        return res.status === 200 ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, signal: opts.signal, what: 'docker-registry /v2/' },
    );
  } catch (err) {
    await child.stop();
    throw err;
  }
  return {
    host: `127.0.0.1:${port}`,
    url,
    child,
    accessLog: async () => parseAccessLog(await readFile(logFile, 'utf8')),
    stop: () => child.stop(),
  };
}
