/** Medians, spreads and the markdown tables the rollout benchmark prints. */
import { isWrite } from './attribution.ts';
import type { Counts } from './requests.ts';
import type { RolloutBreakdown } from './pod-timeline.ts';

export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const secs = (ms: number): string => fmt(ms / 1000, 1);

/** `median (min–max)` */
export function medianSpread(xs: number[], show: (n: number) => string = (n) => fmt(n)): string {
  if (xs.length === 0) return '–';
  return `${show(median(xs))} (${show(Math.min(...xs))}–${show(Math.max(...xs))})`;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export interface ConfigResult {
  config: string;
  rolloutMs: number[];
  statusLagMs: number[];
  breakdown: RolloutBreakdown[];
  /** Controller requests per pod updated, one map per run. */
  perPod: Counts[];
  /** Scheduler requests per pod updated, one number per run. */
  schedulerPerPod: number[];
  /** Kubelet (simulated) requests per pod updated, one number per run. */
  kubeletPerPod: number[];
  /** Controller requests per steady-state reconcile, one map per run. */
  perReconcile: Counts[];
  /** Reconciles per touch observed (ebb: from its metrics; upstream: 1 by construction). */
  reconcilesPerTouch: number[];
  /** ebb only: reconciles during the rollout, per pod updated. */
  rolloutReconcilesPerPod: number[];
  load: number[];
}

export function rolloutTable(results: ConfigResult[], baseline: (config: string) => string | undefined): string {
  const rows = results.map((r) => {
    const base = baseline(r.config);
    const baseRes = base ? results.find((x) => x.config === base) : undefined;
    const ratio = baseRes ? `${fmt((median(r.rolloutMs) / median(baseRes.rolloutMs) - 1) * 100, 1)} %` : '';
    return [
      r.config,
      r.rolloutMs.map(secs).join(', '),
      medianSpread(r.rolloutMs, secs),
      ratio,
      medianSpread(r.statusLagMs, (n) => fmt(n, 0)),
      medianSpread(r.load, (n) => fmt(n, 2)),
    ];
  });
  return table(['config', 'rollout s (each run)', 'median (min–max) s', 'vs upstream', 'status lag ms', 'load avg (1 min) during'], rows);
}

export function breakdownTable(results: ConfigResult[]): string {
  const col = (r: ConfigResult, f: (b: RolloutBreakdown) => number): string => medianSpread(r.breakdown.map(f), secs);
  const rows = results.map((r) => [
    r.config,
    col(r, (b) => b.firstDelete),
    col(r, (b) => b.terminate),
    col(r, (b) => b.create),
    col(r, (b) => b.start),
    col(r, (b) => b.nextDelete),
    col(r, (b) => b.create + b.nextDelete + b.firstDelete),
    medianSpread(
      r.breakdown.map((b) => b.maxCreate),
      (n) => fmt(n, 0),
    ),
    medianSpread(
      r.breakdown.map((b) => b.maxNextDelete),
      (n) => fmt(n, 0),
    ),
    r.breakdown.map((b) => String(b.pods)).join('/'),
  ]);
  return table(
    [
      'config',
      'change → 1st delete s',
      'Σ terminate s (kubelet)',
      'Σ gone → create s (ctrl)',
      'Σ create → Ready s (sched+kubelet)',
      'Σ Ready → next delete s (ctrl)',
      'Σ controller s',
      'max gone→create ms',
      'max Ready→next ms',
      'pods traced',
    ],
    rows,
  );
}

function keysOf(maps: Counts[]): string[] {
  const keys = new Set<string>();
  for (const m of maps) for (const k of m.keys()) keys.add(k);
  return [...keys].sort();
}

const medianOf = (maps: Counts[], f: (m: Counts) => number): number => median(maps.map(f));
const total = (m: Counts, keep: (k: string) => boolean): number => [...m].reduce((n, [k, v]) => (keep(k) ? n + v : n), 0);

/** Controller requests by verb/resource per unit (median over runs), one column per config. */
export function requestsTable(results: ConfigResult[], pick: (r: ConfigResult) => Counts[], extra: [string, (r: ConfigResult) => string][] = []): string {
  const keys = keysOf(results.flatMap(pick));
  const rows = keys.map((k) => [
    k,
    ...results.map((r) =>
      fmt(
        medianOf(pick(r), (m) => m.get(k) ?? 0),
        2,
      ),
    ),
  ]);
  rows.push([
    '**reads (GET+LIST)**',
    ...results.map((r) =>
      fmt(
        medianOf(pick(r), (m) => total(m, (k) => !isWrite(k))),
        2,
      ),
    ),
  ]);
  rows.push([
    '**writes**',
    ...results.map((r) =>
      fmt(
        medianOf(pick(r), (m) => total(m, isWrite)),
        2,
      ),
    ),
  ]);
  rows.push([
    '**all controller requests**',
    ...results.map((r) =>
      fmt(
        medianOf(pick(r), (m) => total(m, () => true)),
        2,
      ),
    ),
  ]);
  for (const [label, f] of extra) rows.push([label, ...results.map(f)]);
  return table(['request', ...results.map((r) => r.config)], rows);
}

export const perPodExtras: [string, (r: ConfigResult) => string][] = [
  [
    'all controller requests, (min–max) over runs',
    (r) =>
      medianSpread(
        r.perPod.map((m) => total(m, () => true)),
        (n) => fmt(n, 2),
      ),
  ],
  ['scheduler (binding, Scheduled event, event series)', (r) => fmt(median(r.schedulerPerPod), 2)],
  ['simulated kubelet (subtracted)', (r) => fmt(median(r.kubeletPerPod), 2)],
  ['ebb reconciles per pod updated', (r) => (r.rolloutReconcilesPerPod.length ? medianSpread(r.rolloutReconcilesPerPod, (n) => fmt(n, 2)) : '–')],
];

export const perReconcileExtras: [string, (r: ConfigResult) => string][] = [
  ['reconciles per touch', (r) => medianSpread(r.reconcilesPerTouch, (n) => fmt(n, 2))],
];
