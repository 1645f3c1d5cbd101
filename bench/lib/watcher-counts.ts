/**
 * Why ebb's reconciles ran: the watcher's own counters over a phase (watch events by resource and type, the
 * events it dropped or held by reason, enqueues by outcome), read from its /metrics before and after. An
 * enqueue `added` is a reconcile to come; `merged` and `skipped` joined one already waiting.
 */

/** The counters of interest, one entry per series (`name{labels}` → value). */
import { table } from './report.ts';

export type WatcherCounts = Record<string, number>;

const NAMES = [
  'ebb_watch_events_total',
  'ebb_watch_events_ignored_total',
  'ebb_enqueue_total',
  'ebb_resync_total',
  'ebb_reconcile_total',
  'ebb_worker_thread_ends_total',
];

/** Parses the Prometheus text of the watcher's /metrics into the counters of interest. */
export function parseWatcherCounts(text: string): WatcherCounts {
  const out: WatcherCounts = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const name = NAMES.find((n) => line.startsWith(`${n}{`) || line.startsWith(`${n} `));
    if (!name) continue;
    const at = line.lastIndexOf(' ');
    const value = Number(line.slice(at + 1));
    if (Number.isFinite(value)) out[line.slice(0, at)] = value;
  }
  return out;
}

/** The watcher's counters now (empty when its port is unknown or it does not answer). */
export async function readWatcherCounts(port: number | undefined): Promise<WatcherCounts> {
  if (port === undefined) return {};
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
    return res.ok ? parseWatcherCounts(await res.text()) : {};
  } catch {
    return {};
  }
}

/** The non-zero differences `after - before`, by series, sorted. */
export function countsDelta(before: WatcherCounts, after: WatcherCounts): WatcherCounts {
  const out: WatcherCounts = {};
  for (const key of Object.keys(after).sort()) {
    const d = (after[key] ?? 0) - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/** One row per series, one column per ebb phase: the reconciles the workers ran, then the watcher's counters. */
export function watcherCountsTable(phases: readonly { phase: string; reconciles?: number; watcher?: WatcherCounts }[]): string | undefined {
  const measured = phases.filter((p) => p.watcher !== undefined);
  if (measured.length === 0) return undefined;
  const keys = [...new Set(measured.flatMap((p) => Object.keys(p.watcher ?? {})))].sort();
  const rows = [
    ['App reconciles (workers)', ...measured.map((p) => (p.reconciles !== undefined ? String(p.reconciles) : '–'))],
    ...keys.map((k) => [`\`${k}\``, ...measured.map((p) => String(p.watcher?.[k] ?? 0))]),
  ];
  return table(['ebb', ...measured.map((p) => p.phase)], rows);
}
