/**
 * A real-node run's sandbox directory (containerd's content and snapshots, the kubelets' roots, the logs) is
 * removed once the run has stopped, so runs do not pile up in the temporary directory. It is kept while the
 * ledger still names it (a change could not be undone; the next start reverts it and the directory shows
 * what ran) and when a test failed (its logs are what explains the failure).
 */
import { LEDGER_PATH, readLedger } from './host-apply.ts';
import type { HostOps } from './host-ops.ts';

export interface RunDirOptions {
  ops: Pick<HostOps, 'exists' | 'readText' | 'removeTree'>;
  /** Whether a test of the run failed. */
  failed: boolean;
  ledgerPath?: string;
}

/** Removes `dir` after its sandbox stopped; returns why it was kept, or undefined once removed. */
export async function removeRunDir(dir: string, opts: RunDirOptions): Promise<string | undefined> {
  const ledgerPath = opts.ledgerPath ?? LEDGER_PATH;
  const ledger = await readLedger(opts.ops, ledgerPath);
  if (ledger?.dir === dir) return `kept: ${ledgerPath} still names it (the next start with real nodes reverts what is left)`;
  if (opts.failed) return 'kept for its logs: a test failed';
  await opts.ops.removeTree(dir);
  return undefined;
}
