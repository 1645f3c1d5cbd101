/** The tables of the fleet benchmark (bench/fleet.ts): wall time, requests, CPU and RSS per phase and side. */
import { attribute } from './attribution.ts';
import { table } from './report.ts';
import { watcherCountsTable } from './watcher-counts.ts';
import { sum, type RequestWindow } from './requests.ts';
import type { ControllerKind } from './workloads.ts';

export interface PhaseResult {
  phase: string;
  /** Phase start → the pod watch event after which the fleet was where the phase takes it. */
  ms: number;
  /** Phase start → every workload's status says it is done (create and rollout). */
  statusMs?: number;
  window: RequestWindow;
  /** CPU-seconds per process over the phase (its quiet tail included). */
  cpu: Record<string, number>;
  /** RSS at the end of the phase and the maximum sampled (once a second), MiB. */
  rssEnd: Record<string, number>;
  rssMax: Record<string, number>;
  /** 1-minute load average at the start and the end of the phase. */
  load: [number, number];
  /** ebb only: App reconciles the workers ran in the phase. */
  reconciles?: number;
  /** ebb only: the watcher's counters over the phase (`lib/watcher-counts.ts`). */
  watcher?: Record<string, number>;
  /** ebb only: workers running at most and at the end, started and stopped in the phase. */
  workers?: { max: number; end: number; started: number; stopped: number };
}

export interface SideResult {
  kind: ControllerKind;
  phases: PhaseResult[];
}

export interface FleetSaved {
  meta: {
    apps: number;
    replicas: number;
    namespaces: number;
    nodes: number;
    policy: string;
    profile: string;
    steadyMinutes: number;
    stsSteadyMinutes?: number;
    started: string;
    finished?: string;
    load: { start: number[]; end: number[] };
    incomplete?: string;
    /** kube-controller-manager's `--kube-api-qps`/`--kube-api-burst`, or its defaults (20, 30); unset in older runs. */
    kcmLimits?: { qps: number; burst: number } | 'default';
    /** How ebb's workers ran (unset in older runs: one worker). */
    workers?: string;
  };
  sides: SideResult[];
}

const f = (n: number | undefined, digits = 1): string => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : '–');
const label = (kind: string): string => (kind === 'ebb' ? 'ebb (watcher + workers)' : 'StatefulSet (kube-controller-manager)');
/** The sum over every ebb worker that ran in the phase (`ebb worker` in runs with one fixed worker). */
const WORKERS = 'ebb workers';
const CONTROLLER_PROCS: Record<string, string[]> = { ebb: ['ebb watcher', WORKERS], sts: ['kube-controller-manager'] };
const CPU_PROCS = ['kube-apiserver', 'etcd', 'kube-controller-manager', 'kube-scheduler', 'ebb watcher', WORKERS, 'redis'];

/** A process's value, reading older runs' single `ebb worker` as the workers' sum. */
function of(values: Record<string, number>, name: string): number | undefined {
  return values[name] ?? (name === WORKERS ? values['ebb worker'] : undefined);
}

function phasesByName(saved: FleetSaved): string[] {
  return [...new Set(saved.sides.flatMap((s) => s.phases.map((p) => p.phase)))];
}

export function find(saved: FleetSaved, kind: string, phase: string): PhaseResult | undefined {
  return saved.sides.find((s) => s.kind === kind)?.phases.find((p) => p.phase === phase);
}

export function controllerCpu(kind: string, p: PhaseResult): number {
  return (CONTROLLER_PROCS[kind] ?? []).reduce((a, name) => a + (of(p.cpu, name) ?? 0), 0);
}

export function controllerRss(kind: string, values: Record<string, number>): number {
  return (CONTROLLER_PROCS[kind] ?? []).reduce((a, name) => a + (of(values, name) ?? 0), 0);
}

function wallTable(saved: FleetSaved): string {
  const rows = phasesByName(saved).map((phase) => {
    const e = find(saved, 'ebb', phase);
    const s = find(saved, 'sts', phase);
    const ratio = e && s && phase !== 'steady state' ? `${f(e.ms / s.ms, 2)}` : '–';
    const cell = (p: PhaseResult | undefined): string => (p ? `${f(p.ms / 1000)}${p.statusMs !== undefined ? ` (status ${f(p.statusMs / 1000)})` : ''}` : '–');
    return [phase, cell(e), cell(s), ratio, `${f(e?.load[0], 2)}→${f(e?.load[1], 2)} / ${f(s?.load[0], 2)}→${f(s?.load[1], 2)}`];
  });
  return table(['Phase', 'ebb s', 'StatefulSet s', 'ebb / StatefulSet', 'load ebb / sts'], rows);
}

function requestsTable(saved: FleetSaved, phase: string): string {
  const sides = saved.sides.map((s) => ({ kind: s.kind, p: s.phases.find((x) => x.phase === phase) }));
  const attributed = sides.map((s) => (s.p ? attribute(s.p.window.residual, s.kind) : undefined));
  const keys = [...new Set(attributed.flatMap((a) => (a ? [...a.controller.keys()] : [])))].sort();
  const backgroundKeys = [...new Set(attributed.flatMap((a) => (a ? [...a.background.keys()] : [])))].sort();
  const row = (name: string, pick: (i: number) => number | undefined): string[] => [name, ...sides.map((_, i) => f(pick(i), 0))];
  const rows = [
    ...keys.map((k) => row(k, (i) => attributed[i]?.controller.get(k) ?? 0)),
    row('**controller total**', (i) => (attributed[i] ? sum(attributed[i].controller) : undefined)),
    row('scheduler', (i) => (attributed[i] ? sum(attributed[i].scheduler) : undefined)),
    row('background (leases, nodes, …)', (i) => (attributed[i] ? sum(attributed[i].background) : undefined)),
    ...backgroundKeys.map((k) => row(`  background: ${k}`, (i) => attributed[i]?.background.get(k) ?? 0)),
    row('WATCH closed', (i) => (attributed[i] ? sum(attributed[i].watch) : undefined)),
    row('simulated kubelets (subtracted)', (i) => (sides[i]?.p ? sum(sides[i].p.window.kubelet) : undefined)),
    row('benchmark (subtracted)', (i) => (sides[i]?.p ? sum(sides[i].p.window.bench) : undefined)),
    row('conflicts (409)', (i) => (sides[i]?.p ? sum(sides[i].p.window.conflicts) : undefined)),
  ];
  return table([`${phase}: requests`, ...sides.map((s) => s.kind)], rows);
}

function cpuTable(saved: FleetSaved): string {
  const rows: string[][] = [];
  for (const phase of phasesByName(saved)) {
    for (const s of saved.sides) {
      const p = s.phases.find((x) => x.phase === phase);
      if (p) rows.push([phase, s.kind, ...CPU_PROCS.map((name) => f(of(p.cpu, name))), f(controllerCpu(s.kind, p))]);
    }
  }
  return table(['Phase', 'Side', ...CPU_PROCS, 'controller'], rows);
}

function rssTable(saved: FleetSaved): string {
  const rows: string[][] = [];
  for (const phase of phasesByName(saved)) {
    for (const s of saved.sides) {
      const p = s.phases.find((x) => x.phase === phase);
      if (!p) continue;
      const procs = CONTROLLER_PROCS[s.kind] ?? [];
      const cell = (n: string): string => `${n}: ${f(of(p.rssEnd, n))} (max ${f(of(p.rssMax, n))})`;
      rows.push([phase, label(s.kind), procs.map(cell).join('; '), f(controllerRss(s.kind, p.rssEnd)), f(controllerRss(s.kind, p.rssMax))]);
    }
  }
  return table(['Phase', 'Controller', 'RSS per process at the end (max) MiB', 'controller RSS at the end MiB', 'Σ of per-process maxima MiB'], rows);
}

function goalsTable(saved: FleetSaved): string {
  const pods = saved.meta.apps * saved.meta.replicas;
  const rows: string[][] = [];
  for (const s of saved.sides) {
    const ro = s.phases.find((p) => p.phase === 'rollout wave');
    const st = s.phases.find((p) => p.phase === 'steady state');
    const steadySeconds = st ? st.ms / 1000 : Number.NaN;
    const perK = (n: number): number => n / steadySeconds / (saved.meta.apps / 1000);
    const attributedSteady = st ? attribute(st.window.residual, s.kind) : undefined;
    rows.push([
      label(s.kind),
      f(ro ? (ro.cpu['kube-apiserver'] ?? Number.NaN) / pods : undefined, 4),
      f(ro ? controllerCpu(s.kind, ro) / pods : undefined, 4),
      f(attributedSteady ? perK(sum(attributedSteady.controller)) : undefined, 3),
      f(st ? perK(sum(st.window.residual)) : undefined, 3),
      f(st ? perK(sum(st.window.apiserver)) : undefined, 3),
      st?.reconciles !== undefined ? String(st.reconciles) : '–',
    ]);
  }
  return table(
    [
      'Controller',
      'rollout: apiserver CPU-s per pod updated',
      'rollout: controller CPU-s per pod updated',
      'steady: controller req/s per 1,000 workloads',
      'steady: all but kubelets and benchmark, req/s per 1,000',
      'steady: every apiserver request, req/s per 1,000',
      'steady: ebb reconciles',
    ],
    rows,
  );
}

/** Per phase and side: wall time, CPU of the apiserver, etcd and the controller, controller requests and RSS. */
function phaseTable(saved: FleetSaved): string {
  const rows: string[][] = [];
  for (const phase of phasesByName(saved)) {
    const cells = (kind: ControllerKind): number[] | undefined => {
      const p = find(saved, kind, phase);
      if (!p) return undefined;
      const requests = sum(attribute(p.window.residual, kind).controller);
      return [
        p.ms / 1000,
        p.cpu['kube-apiserver'] ?? Number.NaN,
        p.cpu['etcd'] ?? Number.NaN,
        controllerCpu(kind, p),
        requests,
        controllerRss(kind, p.rssEnd),
        controllerRss(kind, p.rssMax),
      ];
    };
    const [e, s] = [cells('ebb'), cells('sts')];
    const w = find(saved, 'ebb', phase)?.workers;
    const digits = [1, 1, 1, 1, 0, 0, 0];
    if (e) rows.push([phase, 'ebb', ...e.map((v, i) => f(v, digits[i])), w ? `${w.max} (end ${w.end})` : '–']);
    if (s) rows.push([phase, 'StatefulSet', ...s.map((v, i) => f(v, digits[i])), '–']);
    if (e && s)
      rows.push([phase, '**ebb / StatefulSet**', ...e.map((v, i) => (phase === 'steady state' && i === 0 ? '–' : f(v / (s[i] ?? Number.NaN), 2))), '']);
  }
  return table(
    [
      'Phase',
      'Side',
      'wall s',
      'apiserver CPU-s',
      'etcd CPU-s',
      'controller CPU-s',
      'controller requests',
      'controller RSS end MiB',
      'controller RSS max MiB',
      'ebb workers max',
    ],
    rows,
  );
}

function limitsLine(m: FleetSaved['meta']): string {
  const k = m.kcmLimits;
  const kcm =
    k === undefined || k === 'default'
      ? '**kube-controller-manager at its default client limits (20 QPS, burst 30), which pace the StatefulSet side: the old comparison.**'
      : `kube-controller-manager at client limits that do not bind: --kube-api-qps ${k.qps} --kube-api-burst ${k.burst}.`;
  return `${kcm} ${m.workers ?? 'One ebb worker (fixed)'}.`;
}

export function fleetReport(saved: FleetSaved): string {
  const m = saved.meta;
  const out = [
    `Fleet: ${m.apps} workloads × ${m.replicas} replicas (${m.policy}), ${m.namespaces} namespaces, ${m.nodes} simulated nodes (${m.profile} kubelet timings), steady state ${m.steadyMinutes} min${m.stsSteadyMinutes !== undefined && m.stsSteadyMinutes !== m.steadyMinutes ? ` (StatefulSet side ${m.stsSteadyMinutes} min)` : ''}.`,
    `Started ${m.started}, finished ${m.finished ?? '–'}; 1-minute load ${m.load.start.map((n) => f(n, 2)).join(' ')} → ${m.load.end.map((n) => f(n, 2)).join(' ')}.`,
    limitsLine(m),
    ...(m.incomplete ? [`**Incomplete:** ${m.incomplete}.`] : []),
    '',
    '### Per phase (controller: ebb watcher + every worker, or kube-controller-manager; RSS max: Σ of per-process maxima)',
    phaseTable(saved),
    '',
    '### Wall time (s)',
    wallTable(saved),
    '',
    '### Goals',
    goalsTable(saved),
    '',
    '### CPU-seconds per phase',
    cpuTable(saved),
    '',
    '### Controller RSS',
    rssTable(saved),
    '',
    ...phasesByName(saved).flatMap((p) => [`### Requests: ${p}`, requestsTable(saved, p), '']),
    ...saved.sides.flatMap((s) => {
      const t = s.kind === 'ebb' ? watcherCountsTable(s.phases) : undefined;
      return t ? ["### ebb: reconciles and the watcher's counters (events by resource and type, dropped or held by reason, enqueues by outcome)", t, ''] : [];
    }),
  ];
  return `${out.join('\n')}\n`;
}
