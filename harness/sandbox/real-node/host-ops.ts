/**
 * The host operations real nodes need, behind one narrow interface (a fake records calls in unit tests):
 * sysctls, directories, symlinks, links, mounts, mount namespaces, cgroups and processes. Everything is done
 * by path or by PID.
 */
import { execFile } from 'node:child_process';
import { access, mkdir, readdir, readFile, readlink, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mountsUnder, type NamespaceBind } from './host-plan.ts';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface HostOps {
  readSysctl(key: string): Promise<string>;
  writeSysctl(key: string, value: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  mkdirs(path: string): Promise<void>;
  /** Removes `path` and what it holds; a missing path is not an error. */
  removeTree(path: string): Promise<void>;
  list(dir: string): Promise<string[]>;
  /** A symlink's target, or undefined when `path` is no symlink. */
  readLink(path: string): Promise<string | undefined>;
  readText(path: string): Promise<string>;
  writeText(path: string, text: string): Promise<void>;
  /** `ip` with arguments; rejects with its stderr. */
  ip(args: string[]): Promise<void>;
  /** Unmounts `path` (lazily when it is busy); a path that is no mount point is not an error. */
  unmount(path: string): Promise<void>;
  /**
   * Makes a mount namespace with private propagation, kept alive by a bind mount of its ns file at `file`
   * (created empty first), and makes each bind mount inside it.
   */
  mountNamespace(file: string, binds: readonly NamespaceBind[]): Promise<void>;
  /** Removes an empty directory (a cgroup); missing is not an error. */
  removeDir(path: string): Promise<void>;
  /** Command line of a running process (NUL separated), or undefined when there is none. */
  cmdline(pid: number): Promise<string | undefined>;
  /** Every PID in /proc. */
  pids(): Promise<number[]>;
  kill(pid: number, signal: NodeJS.Signals): void;
}

async function missingOk<T>(p: Promise<T>, fallback: T): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw err;
  }
}

/** Runs a command; rejects with its command line and stderr. */
async function runOrSay(command: string, args: string[]): Promise<void> {
  try {
    await run(command, args);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')}: ${(e.stderr ?? e.message).trim()}`);
  }
}

const sysctlPath = (key: string): string => join('/proc/sys', ...key.split('.'));

export const realHostOps: HostOps = {
  readSysctl: async (key) => (await readFile(sysctlPath(key), 'utf8')).trim(),
  writeSysctl: (key, value) => writeFile(sysctlPath(key), `${value}\n`),
  exists: (path) =>
    access(path).then(
      () => true,
      () => false,
    ),
  mkdirs: async (path) => void (await mkdir(path, { recursive: true })),
  removeTree: (path) => rm(path, { recursive: true, force: true }),
  list: (dir) => missingOk(readdir(dir), []),
  readLink: (path) => readlink(path).catch(() => undefined),
  readText: (path) => readFile(path, 'utf8'),
  writeText: (path, text) => writeFile(path, text),
  ip: (args) => runOrSay('ip', args),
  unmount: async (path) => {
    try {
      await run('umount', [path]);
    } catch {
      await run('umount', ['-l', path]).catch(() => undefined);
    }
  },
  mountNamespace: async (file, binds) => {
    await writeFile(file, '');
    await runOrSay('unshare', [`--mount=${file}`, '--propagation', 'private', 'true']);
    for (const b of binds) await runOrSay('nsenter', [`--mount=${file}`, 'mount', '--bind', b.source, b.target]);
  },
  removeDir: (path) => missingOk(rmdir(path), undefined),
  cmdline: (pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined),
  pids: async () => (await readdir('/proc')).filter((e) => /^\d+$/.test(e)).map(Number),
  kill: (pid, signal) => {
    try {
      process.kill(pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  },
};

/** Unmounts everything at or under `path`, deepest first, until nothing is left (a file may be mounted over more than once). */
export async function unmountUnder(ops: HostOps, path: string): Promise<void> {
  for (let pass = 0; pass < 5; pass++) {
    const points = mountsUnder(await ops.readText('/proc/self/mountinfo'), path);
    if (points.length === 0) return;
    for (const point of points) await ops.unmount(point);
  }
  const left = mountsUnder(await ops.readText('/proc/self/mountinfo'), path);
  if (left.length > 0) throw new Error(`still mounted: ${left.join(', ')}`);
}
