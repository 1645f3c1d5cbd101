import { execFile } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const MODULE = 'k8s.io/cri-api';
/** Where the published CRI definition sits inside the module. */
const API_PROTO = 'pkg/apis/runtime/v1/api.proto';
/** The Go module that builds the sandbox control plane pins the Kubernetes version, cri-api included. */
const K8S_GO_MOD = path.join(import.meta.dirname, '..', '..', 'hack', 'k8s', 'go.mod');

/** The k8s.io/cri-api version hack/k8s/go.mod pins (its `replace` directive wins over `require`). */
export async function criApiVersion(): Promise<string> {
  const gomod = await readFile(K8S_GO_MOD, 'utf8');
  const escaped = MODULE.replace(/[.]/g, '\\.');
  const replaced = new RegExp(`^replace\\s+${escaped}\\s+=>\\s+${escaped}\\s+(v\\S+)`, 'm').exec(gomod)?.[1];
  const required = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(gomod)?.[1];
  const version = replaced ?? required;
  if (!version) throw new Error(`${K8S_GO_MOD} pins no ${MODULE} version`);
  return version;
}

/**
 * Path of the published `runtime.v1` api.proto of `version`: from the Go module cache, where building the
 * control plane put it, or else downloaded into it with `go mod download` (run in an empty temporary
 * directory, so that it works on a fresh machine and touches no go.mod).
 */
export async function upstreamCriProto(version: string, signal: AbortSignal): Promise<string> {
  const env = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
  const cache = (await go(['env', 'GOMODCACHE'], { env, signal })).trim();
  const cached = path.join(cache, `${MODULE}@${version}`, API_PROTO);
  if (await exists(cached)) return cached;

  const tmp = await mkdtemp(path.join(os.tmpdir(), 'ebb-criapi-'));
  try {
    const out = await go(['mod', 'download', '-json', `${MODULE}@${version}`], { env, signal, cwd: tmp });
    const dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir;
    if (!dir) throw new Error(`go mod download ${MODULE}@${version} reported no directory: ${out.slice(0, 300)}`);
    return path.join(dir, API_PROTO);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function go(args: string[], opts: { env: NodeJS.ProcessEnv; signal: AbortSignal; cwd?: string }): Promise<string> {
  try {
    const { stdout } = await run('go', args, { ...opts, maxBuffer: 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { code?: unknown; stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') throw new Error('the Go toolchain (`go`) is not on PATH; it also builds the sandbox control plane');
    throw new Error(`go ${args.join(' ')} failed: ${(e.stderr ?? e.stdout ?? '').trim().slice(0, 500)}`);
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}
