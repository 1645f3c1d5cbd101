/** The soak's final report: text for stdout (and BENCHMARKS.md) and the same figures as JSON. */
import type { Fleet } from './soak-fleet.ts';
import type { ErrorTally } from './soak-procs.ts';
import { editStats, type Timeline } from './soak-phases.ts';
import { errorTable, flatness, mb, type Flatness, type Sample } from './soak-report.ts';

export interface FinalInput {
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
  boot: Sample;
  samples: Sample[];
  timeline: Timeline;
  fleet: Fleet;
  tally: ErrorTally;
  settled: { ms: number; remaining: Map<string, string[]>; resumed: number };
}

const loads = (l: number[]): string => l.map((n) => n.toFixed(2)).join(' ');
const mem = (m: { rssBytes: number; heapUsedBytes: number } | undefined): string => (m ? `${mb(m.rssBytes)} / ${mb(m.heapUsedBytes)}` : '-');

function flatRow(f: Flatness, boot: Sample): string {
  const slope = (n: number): string => (Number.isNaN(n) ? '-' : `${n >= 0 ? '+' : ''}${n.toFixed(1)}`);
  return `  ${f.name.padEnd(10)} ${mem(boot.memory[f.name]).padStart(15)} ${mem(f.start).padStart(15)} ${mem(f.end).padStart(15)} ${slope(f.rssSlope).padStart(8)} ${slope(f.heapSlope).padStart(8)}   ${f.flat ? 'flat' : 'GREW'}\n`;
}

function memorySection(input: FinalInput, flats: Flatness[]): string {
  const { samples, fleet } = input;
  // The killed-and-replaced worker: each incarnation's last sample (its memory shortly before its SIGKILL).
  const victimLast = fleet.all
    .filter((c) => c.name.startsWith('worker-b'))
    .map((c) => [...samples].reverse().find((s) => s.memory[c.name])?.memory[c.name])
    .filter((m): m is NonNullable<typeof m> => m !== undefined);
  let t = '\nmemory, RSS / V8 heap used (MB): at boot, after the Apps converged (start), at the end; slope over the run (MB/h)\n';
  t += `  ${'process'.padEnd(10)} ${'boot'.padStart(15)} ${'start'.padStart(15)} ${'end'.padStart(15)} ${'RSS/h'.padStart(8)} ${'heap/h'.padStart(8)}\n`;
  for (const f of flats) t += flatRow(f, input.boot);
  if (victimLast.length > 0) {
    const rss = victimLast.map((m) => m.rssBytes).sort((a, b) => a - b);
    const heap = victimLast.map((m) => m.heapUsedBytes).sort((a, b) => a - b);
    t += `  killed worker, ${victimLast.length} incarnations, each one's last sample: RSS ${mb(rss[0])}–${mb(rss.at(-1))}, heap ${mb(heap[0])}–${mb(heap.at(-1))}\n`;
  }
  return `${t}  (flat: end within 25 % of start, with at least 24 MB RSS / 8 MB heap of slack)\n`;
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

function queueSection(input: FinalInput): { text: string; ok: boolean } {
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

function convergenceSection(settled: FinalInput['settled']): string {
  let t = `\nconvergence: ${settled.resumed} paused Apps resumed at the end of the edit phase; `;
  if (settled.remaining.size === 0) return `${t}every App converged ${(settled.ms / 1000).toFixed(1)} s after the last edit\n`;
  t += `${settled.remaining.size} Apps NOT converged after ${(settled.ms / 1000).toFixed(0)} s:\n`;
  for (const [k, why] of settled.remaining) t += `  ${k}: ${why.join('; ')}\n`;
  return t;
}

export function finalReport(input: FinalInput): { text: string; json: Record<string, unknown>; ok: boolean } {
  const { meta, samples, fleet, tally, settled } = input;
  const flats = ['watcher', 'worker-a'].map((n) => flatness(n, samples)).filter((f): f is Flatness => f !== undefined);
  const queue = queueSection(input);
  const restarts = input.timeline.events.filter((e) => e.what.startsWith('Redis restarted')).length;
  const ok = settled.remaining.size === 0 && fleet.crashes.length === 0 && flats.every((f) => f.flat) && queue.ok;

  let t = '\n== Soak results ==\n';
  t += `command: ${meta.command}\nstarted ${meta.started}, finished ${meta.finished}; load average (1/5/15 min) at start ${loads(meta.load.start)}, at end ${loads(meta.load.end)}\n`;
  t += `${meta.apps} Apps, ${meta.minutes} min of edits, seed ${meta.seed}; all created and converged in ${(input.created.ms / 1000).toFixed(1)} s\n`;
  t += `edits: ${JSON.stringify(editStats.byKind)} (${editStats.failedPatches} patches failed)\n`;
  t += `chaos: ${fleet.kills} worker SIGKILLs, ${restarts} Redis restarts; unexpected process exits: ${fleet.crashes.length}\n`;
  for (const c of fleet.crashes) t += `  CRASH ${c.name} at ${new Date(c.at).toISOString()} code ${c.code ?? '-'} signal ${c.signal ?? '-'}\n`;
  t += memorySection(input, flats);
  t += redisSection(samples, meta.apps);
  t += queue.text;
  t += `\nwarnings and errors in the processes' logs, by kind (${tally.total()} lines):\n${errorTable(tally)}`;
  t += convergenceSection(settled);
  t += `\nverdict: ${ok ? 'PASS' : 'FAIL'}\n`;

  const json = {
    meta,
    created: input.created,
    edits: editStats,
    kills: fleet.kills,
    redisRestarts: restarts,
    crashes: fleet.crashes,
    timeline: input.timeline.events,
    flatness: flats,
    errors: Object.fromEntries(tally.counts),
    errorExamples: Object.fromEntries(tally.firstSeen),
    settle: { ms: settled.ms, resumed: settled.resumed, remaining: Object.fromEntries(settled.remaining) },
    ok,
  };
  return { text: t, json, ok };
}
