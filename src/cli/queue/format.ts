import { formatDuration } from '../../common/duration.ts';
import { isRecord } from '../../common/guards.ts';
import { formatKey, validateKey, type ObjectKey } from '../../queue/names.ts';
import type { LimitOverrides, RateLimit } from '../../queue/overrides.ts';
import type { RetryFailedResult } from '../../queue/operator.ts';
import type { QuarantineRecord } from '../../queue/quarantine.ts';
import { totalsByQueue, type FailedJob, type QueueStatus, type Status } from '../../queue/status.ts';

/** Pure: what `ebb queue` prints. */

/** A short age for people: `45s`, `3m12s`, `2h5m`, `3d4h`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600)}h`;
}

export function formatRateLimit(r: RateLimit): string {
  return `${r.max}/${formatDuration(r.durationMs)}`;
}

function asKey(data: unknown): ObjectKey | undefined {
  try {
    return isRecord(data) ? validateKey(data as unknown as ObjectKey) : undefined;
  } catch {
    return undefined;
  }
}

/** The object a job is about: its key, or a timer's key and reason; else its payload as JSON. */
export function describeJobData(data: unknown): string {
  const key = asKey(data);
  if (key) return formatKey(key);
  if (isRecord(data)) {
    const timerKey = asKey(data['key']);
    if (timerKey) return `${formatKey(timerKey)} (timer ${String(data['reason'])})`;
  }
  return JSON.stringify(data) ?? String(data);
}

function columns(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '));
}

/** Queues with shards: each queue's total row, then one row per shard with the Redis Cluster slot of its keys. */
function countsTable(queues: readonly QueueStatus[], at: number): string[] {
  const sharded = queues.some((q) => q.shard > 0);
  const rows = sharded ? totalsByQueue(queues).flatMap((t) => [t, ...queues.filter((q) => q.name === t.name)]) : queues;
  const shardCells = (q: QueueStatus): string[] => (sharded ? [q.shard < 0 ? 'all' : String(q.shard), q.slot < 0 ? '-' : String(q.slot)] : []);
  const head = [
    'QUEUE',
    ...(sharded ? ['SHARD', 'SLOT'] : []),
    'STATE',
    'WAIT',
    'PRIORITIZED',
    'ACTIVE',
    'DELAYED',
    'FAILED',
    'COMPLETED',
    'WORKERS',
    'OLDEST WAITING',
  ];
  const cells = rows.map((q) => [
    q.name,
    ...shardCells(q),
    q.paused ? 'paused' : 'running',
    ...(['wait', 'prioritized', 'active', 'delayed', 'failed', 'completed'] as const).map((s) => String(q.counts[s])),
    String(q.workers),
    q.oldestWaitingAt === undefined ? '-' : `${formatAge(at - q.oldestWaitingAt)} ago`,
  ]);
  return columns([head, ...cells]);
}

function limitLines(q: QueueStatus | undefined, overrides: LimitOverrides): string[] {
  if (!q) return [];
  const source = (o: unknown): string => (o === undefined ? "watcher's setting" : 'set with ebb queue');
  return [
    `global concurrency: ${q.globalConcurrency ?? 'none'} (${source(overrides.globalConcurrency)})`,
    `global rate limit:  ${q.globalRateLimit ? formatRateLimit(q.globalRateLimit) : 'none'} (${source(overrides.globalRateLimit)})`,
  ];
}

function failedLines(q: QueueStatus, at: number): string[] {
  if (q.failed.length === 0) return [];
  const line = (f: FailedJob): string => {
    const when = f.failedAt === undefined ? '' : `, ${formatAge(at - f.failedAt)} ago`;
    const error = (f.lastError.split('\n')[0] ?? '').slice(0, 300);
    return `  ${describeJobData(f.data)}  job ${f.id}, ${f.attempts} attempt${f.attempts === 1 ? '' : 's'}${when}: ${error}`;
  };
  return [`failed ${q.name} jobs (${q.failed.length} of ${q.counts.failed}, newest first):`, ...q.failed.map(line)];
}

/** The human-readable `ebb queue status`: limits and failed jobs of each queue are its shards' together. */
export function formatStatus(status: Status): string {
  const totals = totalsByQueue(status.queues);
  const reconcile = totals[0];
  const lines = [...countsTable(status.queues, status.at), '', ...limitLines(reconcile, status.overrides)];
  for (const q of totals) {
    const failed = failedLines(q, status.at);
    if (failed.length > 0) lines.push('', ...failed);
  }
  if (reconcile?.paused) lines.push('', 'reconcile is paused: no reconcile starts until `ebb queue resume`; events are still recorded as jobs');
  return `${lines.join('\n')}\n`;
}

/** `ebb queue status --json`: the same facts, machine-readable (times as epoch ms), with each queue's shards added up in `totals`. */
export function statusJson(status: Status): string {
  return `${JSON.stringify({ ...status, totals: totalsByQueue(status.queues) }, null, 2)}\n`;
}

export function formatRetryFailed(r: RetryFailedResult): string {
  if (r.failed === 0) return 'no failed jobs\n';
  const parts = [`${r.added} reconcile${r.added === 1 ? '' : 's'} enqueued`, `${r.merged} merged into pending jobs`];
  if (r.unreadable > 0) parts.push(`${r.unreadable} failed job${r.unreadable === 1 ? '' : 's'} without an object key left in place`);
  return `${r.failed} failed job${r.failed === 1 ? '' : 's'}: ${parts.join(', ')}\n`;
}

/** `ebb queue quarantined`: one line per held object, oldest first. */
export function formatQuarantined(held: ReadonlyMap<string, QuarantineRecord>): string {
  if (held.size === 0) return 'no object is quarantined\n';
  const rows = [...held].sort(([, a], [, b]) => a.since.localeCompare(b.since));
  const table = columns([
    ['OBJECT', 'SINCE', 'UNFINISHED RUNS', 'AT GENERATION'],
    ...rows.map(([k, r]) => [k, r.since, String(r.unfinished), String(r.generation ?? '-')]),
  ]);
  return `${table.join('\n')}\n`;
}
