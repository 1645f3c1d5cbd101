/**
 * What the rollout benchmark records (saved with --json, re-printed with --report) and how it is printed.
 * Windows are stored raw (apiserver, kubelet, benchmark, residual counts); the attribution to controller,
 * scheduler, watch and background is recomputed when printing, so a saved run can be re-read with a
 * corrected attribution.
 */
import { attribute, type Attributed } from './attribution.ts';
import type { ReconcileClass } from './ebb-trace.ts';
import type { RolloutBreakdown } from './pod-timeline.ts';
import { sum, type Counts, type RequestWindow } from './requests.ts';
import { breakdownTable, perPodExtras, perReconcileExtras, requestsTable, rolloutTable, type ConfigResult } from './report.ts';
import type { ControllerKind, Policy } from './workloads.ts';

export interface TraceResult {
  /** ebb's own requests counted client-side (cross-checks the attributed controller requests). */
  clientRequests: Counts;
  classes: Map<ReconcileClass, { reconciles: number; requests: number; reads: number }>;
}

export interface Measured {
  run: number;
  kind: ControllerKind;
  policy: Policy;
  name: string;
  setupMs: number;
  steady: { touches: number; reconciles: number; window: RequestWindow };
  resync?: { count: number; reconciles: number; window: RequestWindow };
  rollout: {
    ms: number;
    statusLagMs: number;
    window: RequestWindow;
    breakdown: RolloutBreakdown;
    nodes: number;
    load: [number, number];
    ebb?: { reconciles: number; avgDurationMs: number; avgQueueLatencyMs: number; watcher: Counts; trace?: TraceResult };
  };
}

export interface Saved {
  meta: {
    replicas: number;
    runs: number;
    nodes: number;
    graceSeconds: number;
    touches: number;
    started: string;
    finished: string;
    load: { start: number[]; end: number[] };
  };
  idle: { seconds: number; window: RequestWindow };
  measurements: Measured[];
}

/** JSON with Maps kept as `{"$map": [[k, v], ...]}`. */
export function toJson(saved: Saved): string {
  return JSON.stringify(saved, (_k, v: unknown): unknown => (v instanceof Map ? { $map: [...(v as Map<unknown, unknown>)] } : v), 2);
}

export function fromJson(text: string): Saved {
  return JSON.parse(text, (_k, v: unknown): unknown =>
    v !== null && typeof v === 'object' && '$map' in v ? new Map((v as { $map: [unknown, unknown][] }).$map) : v,
  ) as Saved;
}

const attributed = (w: RequestWindow, kind: ControllerKind): Attributed => attribute(w.residual, kind);

function scale(c: Counts, by: number): Counts {
  return new Map([...c].map(([k, v]) => [k, v / by]));
}

const CONTROLLERS: ControllerKind[] = ['ebb', 'sts'];
const POLICIES: Policy[] = ['OrderedReady', 'Parallel'];

function summarize(saved: Saved): ConfigResult[] {
  const n = saved.meta.replicas;
  const out: ConfigResult[] = [];
  for (const kind of CONTROLLERS) {
    for (const policy of POLICIES) {
      const ms = saved.measurements.filter((m) => m.kind === kind && m.policy === policy);
      if (ms.length === 0) continue;
      out.push({
        config: `${kind === 'ebb' ? 'ebb' : 'upstream'} ${policy}`,
        rolloutMs: ms.map((m) => m.rollout.ms),
        statusLagMs: ms.map((m) => m.rollout.statusLagMs),
        breakdown: ms.map((m) => m.rollout.breakdown),
        perPod: ms.map((m) => scale(attributed(m.rollout.window, kind).controller, n)),
        schedulerPerPod: ms.map((m) => sum(attributed(m.rollout.window, kind).scheduler) / n),
        kubeletPerPod: ms.map((m) => sum(m.rollout.window.kubelet) / n),
        perReconcile: ms.map((m) => scale(attributed(m.steady.window, kind).controller, Math.max(1, m.steady.reconciles))),
        reconcilesPerTouch: ms.map((m) => m.steady.reconciles / m.steady.touches),
        rolloutReconcilesPerPod: ms.flatMap((m) => (m.rollout.ebb ? [m.rollout.ebb.reconciles / n] : [])),
        load: ms.flatMap((m) => m.rollout.load),
      });
    }
  }
  return out;
}

function baselineOf(config: string): string | undefined {
  return config.startsWith('ebb ') ? config.replace('ebb ', 'upstream ') : undefined;
}

const list = (c: Counts): string => [...c].map(([k, v]) => `${k} ${v}`).join(', ');

function runLine(m: Measured): string {
  const a = attributed(m.rollout.window, m.kind);
  const e = m.rollout.ebb;
  const ebb = e
    ? `; ebb reconciles ${e.reconciles}, avg duration ${e.avgDurationMs.toFixed(1)} ms, avg enqueue→start ${e.avgQueueLatencyMs.toFixed(1)} ms; watcher: ${list(e.watcher)}`
    : '';
  return (
    `- run ${m.run} ${m.name}: rollout ${(m.rollout.ms / 1000).toFixed(2)} s, setup ${(m.setupMs / 1000).toFixed(1)} s, new pods on ${m.rollout.nodes} nodes, ` +
    `409s ${list(m.rollout.window.conflicts) || 0}, scheduler ${list(a.scheduler)}, POST events.k8s.io beyond bindings ${a.schedulerEventsCheck}, ` +
    `background ${sum(a.background)}, watch closes ${sum(a.watch)}${ebb}`
  );
}

function traceLine(m: Measured): string | undefined {
  const t = m.rollout.ebb?.trace;
  if (!t) return undefined;
  const classes = [...t.classes].map(([c, v]) => `${c}: ${v.reconciles} reconciles, ${v.requests} requests (${v.reads} reads)`).join('; ');
  return `- trace ${m.name}: ebb's requests counted client-side ${sum(t.clientRequests)} (from apiserver metrics, attributed: ${sum(attributed(m.rollout.window, m.kind).controller)}); reconciles by what they wrote: ${classes}`;
}

export function printReport(saved: Saved): string {
  const { meta, measurements } = saved;
  const results = summarize(saved);
  const lines = [
    `## Rollout time: ${meta.replicas} replicas, RollingUpdate (recreate), maxUnavailable 1, ${meta.runs} runs, ${meta.nodes} nodes, grace ${meta.graceSeconds} s`,
    '',
    rolloutTable(results, baselineOf),
    '',
    '### Where the time went (median (min–max) over runs; seen by one pod watch)',
    '',
    breakdownTable(results),
    '',
    '### Controller requests per pod updated (median over runs)',
    '',
    requestsTable(results, (r) => r.perPod, perPodExtras),
    '',
    `### Controller requests per steady-state reconcile (annotation touch, ${meta.touches} per run; median over runs)`,
    '',
    requestsTable(results, (r) => r.perReconcile, perReconcileExtras),
    '',
  ];
  const resyncs = measurements.flatMap((m) => (m.resync ? [m.resync] : []));
  if (resyncs.length > 0) {
    const perResync = resyncs.map((r) => sum(attributed(r.window, 'ebb').controller) / Math.max(1, r.reconciles));
    lines.push(
      `ebb resync: ${perResync.map((x) => x.toFixed(2)).join(', ')} controller requests per reconcile; reconciles per resync ${resyncs.map((r) => r.reconciles / r.count).join(', ')}`,
      '',
    );
  }
  lines.push(...measurements.map(runLine));
  lines.push(...measurements.flatMap((m) => traceLine(m) ?? []));
  const idle = attributed(saved.idle.window, 'ebb');
  lines.push('', `Idle window (${saved.idle.seconds} s, nothing changing), residual: ${list(new Map([...idle.controller, ...idle.background])) || 'none'}`);
  lines.push(
    `Started ${meta.started}, finished ${meta.finished}; load average (1/5/15 min) at start ${meta.load.start.map((x) => x.toFixed(2)).join(' ')}, at end ${meta.load.end.map((x) => x.toFixed(2)).join(' ')}`,
  );
  return `${lines.join('\n')}\n`;
}
