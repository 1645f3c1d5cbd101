/** Samples the soak takes (process memory, Redis, queue counts) and the text it prints from them. */
import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import type { EbbChild, Memory } from './soak-procs.ts';

export interface QueueCounts {
  completed: number;
  failed: number;
  waiting: number;
  active: number;
  delayed: number;
  timers: number;
}

export interface RedisSample {
  usedMemory: number;
  keys: number;
}

export interface Sample {
  at: number;
  minute: number;
  memory: Record<string, Memory>;
  redis: RedisSample | undefined;
  queue: QueueCounts | undefined;
  errors: number;
  notConverged: number | undefined;
  load: number;
}

const MB = 1024 * 1024;
export const mb = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '-' : (n / MB).toFixed(1));

export async function sampleMemory(children: EbbChild[]): Promise<Record<string, Memory>> {
  const out: Record<string, Memory> = {};
  for (const c of children) {
    const m = await c.memory();
    if (m) out[c.name] = m;
  }
  return out;
}

export async function sampleRedis(admin: Redis): Promise<RedisSample | undefined> {
  try {
    const info = await admin.info('memory');
    return { usedMemory: Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN), keys: await admin.dbsize() };
  } catch {
    return undefined;
  }
}

export async function sampleQueue(reconcile: Queue, timers: Queue): Promise<QueueCounts | undefined> {
  try {
    const c = await reconcile.getJobCounts('completed', 'failed', 'wait', 'prioritized', 'active', 'delayed', 'waiting-children');
    const t = await timers.getJobCounts('delayed', 'wait', 'prioritized', 'active');
    const n = (k: string, from: Record<string, number> = c): number => from[k] ?? 0;
    return {
      completed: n('completed'),
      failed: n('failed'),
      waiting: n('wait') + n('prioritized'),
      active: n('active'),
      delayed: n('delayed'),
      timers: n('delayed', t) + n('wait', t) + n('prioritized', t) + n('active', t),
    };
  } catch {
    return undefined;
  }
}

export function sampleLine(s: Sample): string {
  const mem = Object.entries(s.memory)
    .map(([name, m]) => `${name} ${mb(m.rssBytes)}/${mb(m.heapUsedBytes)}`)
    .join(', ');
  const q = s.queue;
  const queue = q ? `completed ${q.completed} failed ${q.failed} waiting ${q.waiting} active ${q.active} delayed ${q.delayed} timers ${q.timers}` : 'queue -';
  const redis = s.redis ? `redis ${mb(s.redis.usedMemory)} MB ${s.redis.keys} keys` : 'redis -';
  const conv = s.notConverged === undefined ? '' : `; not converged ${s.notConverged}`;
  return `t+${s.minute.toFixed(1)} min load ${s.load.toFixed(2)}; RSS/heap MB: ${mem}; ${redis}; ${queue}; warn+error lines ${s.errors}${conv}`;
}

export function errorTable(counts: Record<string, number>): string {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  if (rows.length === 0) return '  (none)\n';
  return rows.map(([k, n]) => `  ${String(n).padStart(6)}  ${k}\n`).join('');
}

/** Least-squares slope of y over x (units of y per unit of x); NaN with fewer than 3 points. */
export function slope(points: [number, number][]): number {
  if (points.length < 3) return Number.NaN;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

export interface Flatness {
  name: string;
  start: Memory;
  end: Memory;
  /** Lowest heap used and median RSS over the first and over the last quarter of the samples (at least 3 each). */
  early: Memory;
  late: Memory;
  /** MB per hour over the second half of the samples. */
  heapSlope: number;
  rssSlope: number;
  /** Undefined when the run is shorter than `MIN_JUDGED_MINUTES`: warm-up would dominate both quarters. */
  flat: boolean | undefined;
}

/** Memory is judged flat or not only over a run at least this long. */
export const MIN_JUDGED_MINUTES = 20;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

/** Heap floor (V8's heap in use goes up and down with each collection; its low points follow the live set) and RSS median. */
function level(ms: Memory[]): Memory {
  return { heapUsedBytes: Math.min(...ms.map((m) => m.heapUsedBytes)), rssBytes: median(ms.map((m) => m.rssBytes)) };
}

/**
 * Flat: the late heap floor within 25 % (at least 8 MB) of the early one, and the late RSS median within 25 %
 * (at least 24 MB) of the early one. A leak of what one reconcile or one watch event touches would go far
 * beyond either over an hour of steady edits.
 */
export function flatness(name: string, samples: Sample[]): Flatness | undefined {
  const mine = samples.filter((s) => s.memory[name] !== undefined);
  const ms = mine.map((s) => s.memory[name]!);
  if (ms.length < 2) return undefined;
  const w = Math.min(ms.length, Math.max(3, Math.floor(ms.length / 4)));
  const early = level(ms.slice(0, w));
  const late = level(ms.slice(-w));
  const within = (a: number, b: number, floor: number): boolean => b - a <= Math.max(floor, a * 0.25);
  const half = mine.slice(Math.floor(mine.length / 2));
  const hours = (s: Sample): number => (s.at - half[0]!.at) / 3_600_000;
  return {
    name,
    start: ms[0]!,
    end: ms.at(-1)!,
    early,
    late,
    heapSlope: slope(half.map((s) => [hours(s), s.memory[name]!.heapUsedBytes / MB])),
    rssSlope: slope(half.map((s) => [hours(s), s.memory[name]!.rssBytes / MB])),
    flat:
      mine.at(-1)!.at - mine[0]!.at < MIN_JUDGED_MINUTES * 60_000
        ? undefined
        : within(early.heapUsedBytes, late.heapUsedBytes, 8 * MB) && within(early.rssBytes, late.rssBytes, 24 * MB),
  };
}
