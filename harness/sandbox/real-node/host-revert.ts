/**
 * The cleaner: reverts a ledger of recorded host changes (host-apply.ts), newest first. Each step is
 * idempotent and tolerates what is already gone, so it serves both a normal stop and the clean-up of a run
 * that was killed; a step that fails is reported and the others still run.
 */
import { join } from 'node:path';
import { sleep } from '../../../src/common/wait.ts';
import { isShimOf, type RecordedChange } from './host-plan.ts';
import { unmountUnder, type HostOps } from './host-ops.ts';
import { LEGACY_REVERTERS, type LegacyChange } from './host-revert-legacy.ts';

export interface RevertResult {
  /** What failed to revert, one line each (empty when everything was undone). */
  failures: string[];
}

/** What a ledger may hold: the changes this layout makes, and those an older layout made. */
export type LedgerChange = RecordedChange | LegacyChange;

/** Reverts `changes` newest first; never throws. */
export async function revertHostChanges(ops: HostOps, changes: readonly LedgerChange[]): Promise<RevertResult> {
  const failures: string[] = [];
  for (const change of [...changes].reverse()) {
    try {
      await revertOne(ops, change);
    } catch (err) {
      failures.push(`${change.kind}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { failures };
}

type Reverter<K extends RecordedChange['kind']> = (ops: HostOps, change: Extract<RecordedChange, { kind: K }>) => Promise<void>;

const REVERTERS: { [K in RecordedChange['kind']]: Reverter<K> } = {
  process: (ops, c) => stopProcess(ops, c.pid, c.exe),
  shims: (ops, c) => killMatching(ops, (cmd) => isShimOf(cmd, c.address)),
  cgroupRoot: async (ops, c) => {
    for (const path of c.paths) await removeCgroupTree(ops, path);
  },
  mountNamespace: (ops, c) => unmountUnder(ops, c.file),
  bridge: async (ops, c) => {
    if (await ops.exists(`/sys/class/net/${c.name}`)) await ops.ip(['link', 'del', c.name]);
  },
  hostDir: async (ops, c) => {
    if (c.created) await ops.removeTree(c.path);
  },
  sysctl: async (ops, c) => {
    if ((await ops.readSysctl(c.key)) !== c.previous) await ops.writeSysctl(c.key, c.previous);
  },
};

function revertOne(ops: HostOps, change: LedgerChange): Promise<void> {
  // A ledger written by an older layout holds kinds this one no longer makes; one of a layout this code does
  // not know (a newer one) cannot be undone here: the message says what can.
  const all = { ...REVERTERS, ...LEGACY_REVERTERS } as Record<string, ((ops: HostOps, change: LedgerChange) => Promise<void>) | undefined>;
  const revert = all[change.kind];
  if (!revert) {
    const what = JSON.stringify(change);
    return Promise.reject(new Error(`unknown change ${what}, written by another version of ebb: undo it by hand (or reboot), then remove the ledger`));
  }
  return revert(ops, change);
}

/** SIGTERM, then SIGKILL after 10 s, to `pid` only while its command line still names `exe` (PIDs are reused). */
async function stopProcess(ops: HostOps, pid: number, exe: string): Promise<void> {
  const alive = async (): Promise<boolean> => (await ops.cmdline(pid))?.split('\0')[0] === exe;
  if (!(await alive())) return;
  ops.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && (await alive()); i++) await sleep(100);
  if (await alive()) ops.kill(pid, 'SIGKILL');
  for (let i = 0; i < 50 && (await alive()); i++) await sleep(100);
}

async function killMatching(ops: HostOps, match: (cmdline: string) => boolean): Promise<void> {
  for (const pid of await ops.pids()) {
    const cmd = await ops.cmdline(pid);
    if (cmd !== undefined && match(cmd)) ops.kill(pid, 'SIGKILL');
  }
}

/** Kills every process left in a cgroup tree (containers whose shim is gone), then removes it deepest first. */
async function removeCgroupTree(ops: HostOps, path: string): Promise<void> {
  if (!(await ops.exists(path))) return;
  const dirs = await cgroupDirs(ops, path);
  for (let attempt = 0; attempt < 20; attempt++) {
    let left = 0;
    for (const dir of dirs) {
      const pids = (await ops.readText(join(dir, 'cgroup.procs')).catch(() => '')).split('\n').filter(Boolean).map(Number);
      for (const pid of pids) ops.kill(pid, 'SIGKILL');
      left += pids.length;
    }
    if (left === 0) break;
    await sleep(100);
  }
  for (const dir of dirs) await ops.removeDir(dir);
}

/** The cgroup directories of a tree, deepest first. */
async function cgroupDirs(ops: HostOps, root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await ops.list(dir)) {
      const child = join(dir, name);
      if (!name.includes('.') && (await ops.exists(join(child, 'cgroup.procs')))) await walk(child);
    }
    out.push(dir);
  };
  await walk(root);
  return out;
}
