/** The soak's final report: text for stdout (and BENCHMARKS.md) and the same figures as JSON. */
import type { Crash } from './soak-fleet.ts';
import type { EditStats } from './soak-phases.ts';
import { errorTable, flatness, mb, MIN_JUDGED_MINUTES, type Flatness, type Sample } from './soak-report.ts';

/** Everything the final report is computed from; saved as JSON (`--json`), re-printed with `--report`. */
export interface SoakResult {
  meta: {
    command: string;
    started: string;
    finished: string;
    load: { start: number[]; end: number[] };
    apps: number;
    minutes: number;
    seed: number;
    removeOnComplete: number;
    removeOnFail: number;
  };
  created: { ms: number };
  /** Pods per node once every App converged (the spread over the simulated nodes). */
  pods?: Record<string, number> | undefined;
  boot?: Sample | undefined;
  samples: Sample[];
  timeline: { at: number; what: string }[];
  kills: number;
  crashes: Crash[];
  edits: EditStats;
  /** Warning and error log lines by kind (`ErrorTally`). */
  errors: Record<string, number>;
  errorExamples?: Record<string, string> | undefined;
  settle: { ms: number; resumed: number; remaining: Record<string, string[]> };
}

const loads = (l: number[]): string => l.map((n) => n.toFixed(2)).join(' ');
const mem = (m: { rssBytes: number; heapUsedBytes: number } | undefined): string => (m ? `${mb(m.rssBytes)} / ${mb(m.heapUsedBytes)}` : '-');

function flatRow(f: Flatness, boot: Sample | undefined): string {
  const slope = (n: number): string => (Number.isNaN(n) ? '-' : `${n >= 0 ? '+' : ''}${n.toFixed(1)}`);
  const cells = [mem(boot?.memory[f.name]), mem(f.start), mem(f.early), mem(f.late), mem(f.end)].map((c) => c.padStart(15)).join(' ');
  return `  ${f.name.padEnd(10)} ${cells} ${slope(f.rssSlope).padStart(8)} ${slope(f.heapSlope).padStart(8)}   ${f.flat === undefined ? 'run too short to judge' : f.flat ? 'flat' : 'GREW'}\n`;
}

function memorySection(input: SoakResult, flats: Flatness[]): string {
  const { samples } = input;
  // The killed-and-replaced worker: each incarnation's last sample (its memory shortly before its SIGKILL).
  const victims = [...new Set(samples.flatMap((s) => Object.keys(s.memory)).filter((n) => n.startsWith('worker-b')))];
  const victimLast = victims
    .map((name) => [...samples].reverse().find((s) => s.memory[name])?.memory[name])
    .filter((m): m is NonNullable<typeof m> => m !== undefined);
  let t = '\nmemory, RSS / V8 heap used (MB): at boot; after the Apps converged (start); early and late quarter of the run';
  t += ' (RSS median / heap floor); at the end; slope over the second half (MB/h)\n';
  const heads = ['boot', 'start', 'early', 'late', 'end'].map((h) => h.padStart(15)).join(' ');
  t += `  ${'process'.padEnd(10)} ${heads} ${'RSS/h'.padStart(8)} ${'heap/h'.padStart(8)}\n`;
  for (const f of flats) t += flatRow(f, input.boot);
  if (victimLast.length > 0) {
    const rss = victimLast.map((m) => m.rssBytes).sort((a, b) => a - b);
    const heap = victimLast.map((m) => m.heapUsedBytes).sort((a, b) => a - b);
    t += `  killed worker, ${victimLast.length} incarnations, each one's last sample: RSS ${mb(rss[0])}–${mb(rss.at(-1))}, heap ${mb(heap[0])}–${mb(heap.at(-1))}\n`;
  }
  return `${t}  (flat: late within 25 % of early, with at least 24 MB RSS / 8 MB heap of slack; judged on runs of ${MIN_JUDGED_MINUTES} min or more)\n`;
}

function redisSection(samples: Sample[], apps: number): string {
  const series = samples.map((s) => s.redis).filter((r): r is NonNullable<typeof r> => r !== undefined);
  if (series.length === 0) return '';
  const used = series.map((r) => r.usedMemory);
  const keys = series.map((r) => r.keys);
  const [first, last] = [series[0]!, series.at(-1)!];
  return (
    `\nRedis used_memory (MB): start ${mb(first.usedMemory)}, min ${mb(Math.min(...used))}, max ${mb(Math.max(...used))}, end ${mb(last.usedMemory)}; ` +
    `keys start ${first.keys}, max ${Math.max(...keys)}, end ${last.keys} (${apps} Apps)\n`
  );
}

function queueSection(input: SoakResult): { text: string; ok: boolean } {
  const { meta, samples } = input;
  const series = samples.map((s) => s.queue).filter((q): q is NonNullable<typeof q> => q !== undefined);
  const maxCompleted = Math.max(0, ...series.map((q) => q.completed));
  const maxFailed = Math.max(0, ...series.map((q) => q.failed));
  const ok = maxCompleted <= meta.removeOnComplete && maxFailed <= meta.removeOnFail;
  const q = series.at(-1);
  const at = (n: number | undefined): string => (n === undefined ? '-' : String(n));
  const text =
    `\nreconcile queue at the end: completed ${at(q?.completed)} (kept at most ${meta.removeOnComplete}; max seen ${maxCompleted}), ` +
    `failed ${at(q?.failed)} (kept at most ${meta.removeOnFail}; max seen ${maxFailed}), waiting ${at(q?.waiting)}, delayed ${at(q?.delayed)}, ` +
    `timers ${at(q?.timers)}: retention ${ok ? 'respected' : 'NOT respected'}\n`;
  return { text, ok };
}

function convergenceSection(settled: SoakResult['settle']): string {
  const remaining = Object.entries(settled.remaining);
  let t = `\nconvergence: ${settled.resumed} paused Apps resumed at the end of the edit phase; `;
  if (remaining.length === 0) return `${t}every App converged ${(settled.ms / 1000).toFixed(1)} s after the last edit\n`;
  t += `${remaining.length} Apps NOT converged after ${(settled.ms / 1000).toFixed(0)} s:\n`;
  for (const [k, why] of remaining) t += `  ${k}: ${why.join('; ')}\n`;
  return t;
}

export function finalReport(input: SoakResult): { text: string; json: Record<string, unknown>; ok: boolean } {
  const { meta, samples, settle } = input;
  const flats = ['watcher', 'worker-a'].map((n) => flatness(n, samples)).filter((f): f is Flatness => f !== undefined);
  const queue = queueSection(input);
  const restarts = input.timeline.filter((e) => e.what.startsWith('Redis restarted')).length;
  const notConverged = Object.keys(settle.remaining).length;
  const ok = notConverged === 0 && input.crashes.length === 0 && flats.every((f) => f.flat !== false) && queue.ok;
  const lines = Object.values(input.errors).reduce((a, b) => a + b, 0);

  let t = '\n== Soak results ==\n';
  t += `command: ${meta.command}\nstarted ${meta.started}, finished ${meta.finished}; load average (1/5/15 min) at start ${loads(meta.load.start)}, at end ${loads(meta.load.end)}\n`;
  t += `${meta.apps} Apps, ${meta.minutes} min of edits, seed ${meta.seed}; all created and converged in ${(input.created.ms / 1000).toFixed(1)} s\n`;
  if (input.pods)
    t += `pods per node at the end: ${Object.entries(input.pods)
      .sort()
      .map(([n, c]) => `${n} ${c}`)
      .join(', ')}\n`;
  t += `edits: ${JSON.stringify(input.edits.byKind)} (${input.edits.failedPatches} patches failed)\n`;
  t += `chaos: ${input.kills} worker SIGKILLs, ${restarts} Redis restarts; unexpected process exits: ${input.crashes.length}\n`;
  for (const c of input.crashes) t += `  CRASH ${c.name} at ${new Date(c.at).toISOString()} code ${c.code ?? '-'} signal ${c.signal ?? '-'}\n`;
  t += memorySection(input, flats);
  t += redisSection(samples, meta.apps);
  t += queue.text;
  t += `\nwarnings and errors in the processes' logs, by kind (${lines} lines):\n${errorTable(input.errors)}`;
  t += convergenceSection(settle);
  t += `\nverdict: ${ok ? 'PASS' : 'FAIL'}\n`;
  return { text: t, json: { ...input, redisRestarts: restarts, flatness: flats, ok }, ok };
}
