/**
 * The executor of host changes: applies each planned change (host-plan.ts) and records what undoing it needs
 * in a ledger file, written after every change, so that a run killed at any point leaves a ledger the next
 * start can revert (host-revert.ts). One ledger per machine, for all the real nodes of one sandbox: their
 * namespaces share the host's mount points and sysctls, so one sandbox with real nodes runs per machine, and
 * the ledger's owner PID says whose it is.
 */
import { dirname, join } from 'node:path';
import type { HostChange, RecordedChange } from './host-plan.ts';
import type { HostOps } from './host-ops.ts';
import type { LegacyChange } from './host-revert-legacy.ts';

/** Where the ledger lives: under /run, so a reboot (which undoes every change) also forgets it. */
export const LEDGER_PATH = '/run/ebb-real-node/ledger.json';

export interface Ledger {
  /** The PID of the process that made the changes (the sandbox). */
  owner: number;
  /** Its start time (`/proc/<pid>/stat` field 22), so a reused PID is not taken for it. */
  ownerStart?: string | undefined;
  /** The sandbox directory, for messages. */
  dir: string;
  changes: RecordedChange[];
}

export class LedgerWriter {
  readonly ledger: Ledger;
  private readonly ops: HostOps;
  private readonly path: string;
  private saving: Promise<void> = Promise.resolve();

  constructor(ops: HostOps, ledger: Ledger, path = LEDGER_PATH) {
    this.ops = ops;
    this.ledger = ledger;
    this.path = path;
  }

  async record(change: RecordedChange): Promise<void> {
    this.ledger.changes.push(change);
    await this.save();
  }

  /** Records a (re)started process, replacing the record of its earlier instance. */
  async recordProcess(name: string, pid: number, exe: string): Promise<void> {
    this.ledger.changes = this.ledger.changes.filter((c) => !(c.kind === 'process' && c.name === name));
    await this.record({ kind: 'process', name, pid, exe });
  }

  /** Writes the ledger; writes are queued, so nodes starting side by side never interleave them. */
  save(): Promise<void> {
    const write = async (): Promise<void> => {
      await this.ops.mkdirs(dirname(this.path));
      await this.ops.writeText(this.path, JSON.stringify(this.ledger, null, 1));
    };
    this.saving = this.saving.then(write, write);
    return this.saving;
  }
}

/** A ledger as read back: it may have been written by an older layout. */
export interface StoredLedger extends Omit<Ledger, 'changes'> {
  changes: (RecordedChange | LegacyChange)[];
}

export async function readLedger(ops: Pick<HostOps, 'exists' | 'readText'>, path = LEDGER_PATH): Promise<StoredLedger | undefined> {
  if (!(await ops.exists(path))) return undefined;
  return JSON.parse(await ops.readText(path)) as StoredLedger;
}

/** Applies one change and records it; the record is written before a change a crash could leave half made. */
export async function applyHostChange(ops: HostOps, change: HostChange, ledger: LedgerWriter): Promise<void> {
  switch (change.kind) {
    case 'sysctl':
      await ledger.record({ kind: 'sysctl', key: change.key, previous: await ops.readSysctl(change.key) });
      if (change.value !== undefined) await ops.writeSysctl(change.key, change.value);
      return;
    case 'hostDir':
      await ledger.record({ kind: 'hostDir', path: change.path, created: !(await ops.exists(change.path)) });
      return ops.mkdirs(change.path);
    case 'bridge':
      await ledger.record({ kind: 'bridge', name: change.name });
      await ops.ip(['link', 'add', change.name, 'type', 'bridge']);
      await ops.ip(['addr', 'add', change.address, 'dev', change.name]);
      await ops.ip(['link', 'set', change.name, 'up']);
      return;
    case 'mountNamespace':
      await ledger.record({ kind: 'mountNamespace', file: change.file });
      for (const bind of change.binds) await ops.mkdirs(bind.source);
      return ops.mountNamespace(change.file, change.binds);
    case 'cgroupRoot':
      return applyCgroupRoot(ops, change, ledger);
    case 'shims':
      return ledger.record({ kind: 'shims', address: change.address });
  }
}

async function applyCgroupRoot(ops: HostOps, change: Extract<HostChange, { kind: 'cgroupRoot' }>, ledger: LedgerWriter): Promise<void> {
  const paths = change.hierarchies.map((h) => join(h, change.name));
  await ledger.record({ kind: 'cgroupRoot', paths: [...paths, ...change.unified.map((h) => join(h, change.name))] });
  for (const [i, path] of paths.entries()) {
    await ops.mkdirs(path);
    // A new cpuset cgroup has no CPUs and no memory nodes: give it its parent's.
    if (change.hierarchies[i]?.endsWith('/cpuset')) {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        await ops.writeText(join(path, file), await ops.readText(join(dirname(path), file)));
      }
    }
  }
}

/** Applies every change in order, recording each; on a failure the changes made so far stay recorded. */
export async function applyHostChanges(ops: HostOps, changes: readonly HostChange[], ledger: LedgerWriter): Promise<void> {
  for (const change of changes) await applyHostChange(ops, change, ledger);
}

/** A process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), or undefined when it is gone. */
export async function processStartTime(ops: HostOps, pid: number): Promise<string | undefined> {
  const stat = await ops.readText(`/proc/${pid}/stat`).catch(() => undefined);
  // Fields after the command name (which may hold spaces) start at field 3.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}
