import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BasicAuth } from '../../harness/sandbox/real-node/oci-image.ts';
import { parseAccessLog, type AccessLogEntry } from '../../harness/sandbox/real-node/registry.ts';
import { freePort, startDaemon, waitUntil } from './process.ts';

/** Debian's Docker registry, distribution 2.8 (package `docker-registry`). */
export const REGISTRY_BIN = '/usr/bin/docker-registry';
/** `htpasswd` of Debian's apache2-utils, to write the bcrypt entry the registry's htpasswd auth reads. */
export const HTPASSWD_BIN = '/usr/bin/htpasswd';

export type { AccessLogEntry, BasicAuth };
export { parseAccessLog };

export interface Registry {
  /** `127.0.0.1:<port>`: the registry part of image references. */
  readonly host: string;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The credential the registry requires, when started with one. */
  readonly auth: BasicAuth | undefined;
  /** Every request so far, oldest first. */
  accessLog(): Promise<AccessLogEntry[]>;
  /** Manifest requests (GET or HEAD) for `repo` by tag or digest, oldest first. */
  manifestRequests(repo: string): Promise<AccessLogEntry[]>;
  /** Stops the registry (SIGTERM by PID) and removes its temporary directory. */
  dispose(): Promise<void>;
}

const READY_TIMEOUT_MS = 15_000;

/**
 * Starts a registry on 127.0.0.1 and a free port, storing blobs in a temporary directory, with its access
 * log on and, with `auth`, htpasswd basic auth. Resolves once `/v2/` answers.
 */
export async function startRegistry(opts: { auth?: BasicAuth; signal: AbortSignal }): Promise<Registry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ebb-reg-'));
  try {
    await mkdir(path.join(dir, 'storage'));
    const htpasswd = opts.auth ? path.join(dir, 'htpasswd') : undefined;
    if (opts.auth && htpasswd) await writeFile(htpasswd, await htpasswdEntry(opts.auth, opts.signal), { mode: 0o600 });
    const port = await freePort();
    const configPath = path.join(dir, 'config.yml');
    await writeFile(configPath, registryConfig(dir, port, htpasswd));
    const accessLogPath = path.join(dir, 'access.log');
    const logPath = path.join(dir, 'registry.log');
    const daemon = await startDaemon(REGISTRY_BIN, ['serve', configPath], { stdout: accessLogPath, stderr: logPath });
    const url = `http://127.0.0.1:${port}`;
    try {
      const probe = async (): Promise<boolean> => {
        const res = await fetch(`${url}/v2/`, { signal: opts.signal });
        await res.body?.cancel();
        return res.status === 200 || res.status === 401;
      };
      await waitUntil('docker-registry', probe, { daemon, timeoutMs: READY_TIMEOUT_MS, signal: opts.signal, logHint: logPath });
    } catch (err) {
      await daemon.stop();
      throw err;
    }

    const accessLog = async (): Promise<AccessLogEntry[]> => parseAccessLog(await readFile(accessLogPath, 'utf8'));
    return {
      host: `127.0.0.1:${port}`,
      url,
      auth: opts.auth,
      accessLog,
      async manifestRequests(repo) {
        const prefix = `/v2/${repo}/manifests/`;
        return (await accessLog()).filter((e) => (e.method === 'GET' || e.method === 'HEAD') && e.path.startsWith(prefix));
      },
      async dispose() {
        await daemon.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Registry config (distribution 2.8): filesystem storage, access log on, optional htpasswd auth. */
function registryConfig(dir: string, port: number, htpasswd: string | undefined): string {
  const q = (s: string): string => JSON.stringify(s);
  const auth = htpasswd ? `auth:\n  htpasswd:\n    realm: ebb-test\n    path: ${q(htpasswd)}\n` : '';
  return `version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: ${q(path.join(dir, 'storage'))}
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:${port}
  secret: ebb-test-registry
${auth}`;
}

/** `user:<bcrypt hash>` from `htpasswd -niB`, the password given on stdin (never on the command line). */
function htpasswdEntry(auth: BasicAuth, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(HTPASSWD_BIN, ['-niB', auth.username], { signal }, (err, stdout) => {
      if (err) reject(new Error(`htpasswd failed (exit ${String(err.code)})`));
      else resolve(`${stdout.trim()}\n`);
    });
    child.stdin?.end(`${auth.password}\n`);
  });
}
