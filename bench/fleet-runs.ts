/**
 * The fleet benchmark's runs side by side: several `bench/fleet.ts --json` files (three runs per side in
 * alternating order, as BENCHMARKS asks) summed up per phase as medians with min–max, for ebb, upstream and their
 * ratio (the ratio's median is of the per-run ratios, each run's two sides measured in one sandbox).
 *
 *   node bench/fleet-runs.ts [--phases 'create → Ready,rollout wave'] RUN.json ...
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { attribute } from './lib/attribution.ts';
import { reviver } from './lib/fleet-json.ts';
import { controllerCpu, controllerRss, find, type FleetSaved, type PhaseResult } from './lib/fleet-report.ts';
import { medianSpread, table } from './lib/report.ts';
import { sum } from './lib/requests.ts';
import type { ControllerKind } from './lib/workloads.ts';

const { values: opt, positionals: files } = parseArgs({
  options: { phases: { type: 'string', default: 'create → Ready,rollout wave' } },
  allowPositionals: true,
});
if (files.length === 0) throw new Error('usage: node bench/fleet-runs.ts [--phases a,b] RUN.json ...');

const runs = await Promise.all(files.map(async (f) => JSON.parse(await readFile(f, 'utf8'), reviver) as FleetSaved));

interface Measure {
  name: string;
  digits: number;
  of(p: PhaseResult, kind: ControllerKind, pods: number): number;
}

const MEASURES: Measure[] = [
  { name: 'wall s', digits: 1, of: (p) => p.ms / 1000 },
  { name: 'controller requests', digits: 0, of: (p, kind) => sum(attribute(p.window.residual, kind).controller) },
  { name: 'controller requests per pod', digits: 2, of: (p, kind, pods) => sum(attribute(p.window.residual, kind).controller) / pods },
  { name: 'apiserver CPU-s per pod', digits: 4, of: (p, _k, pods) => (p.cpu['kube-apiserver'] ?? Number.NaN) / pods },
  { name: 'etcd CPU-s', digits: 1, of: (p) => p.cpu['etcd'] ?? Number.NaN },
  { name: 'scheduler CPU-s', digits: 1, of: (p) => p.cpu['kube-scheduler'] ?? Number.NaN },
  { name: 'controller CPU-s', digits: 1, of: (p, kind) => controllerCpu(kind, p) },
  { name: 'controller CPU-s per pod', digits: 4, of: (p, kind, pods) => controllerCpu(kind, p) / pods },
  { name: 'controller RSS at the end, MiB', digits: 0, of: (p, kind) => controllerRss(kind, p.rssEnd) },
  { name: 'controller RSS max, MiB', digits: 0, of: (p, kind) => controllerRss(kind, p.rssMax) },
];

const show =
  (digits: number) =>
  (n: number): string =>
    n.toFixed(digits);

const out: string[] = [];
const first = runs[0]!.meta;
out.push(
  `${runs.length} runs of ${first.apps} workloads × ${first.replicas} (${first.policy}, ${first.nodes} simulated nodes, ${first.profile} kubelet timings); ` +
    `runs started ${runs.map((r) => `${r.meta.started.slice(11, 16)} (${r.sides.map((s) => s.kind).join(',')}, load ${r.meta.load.start[0]?.toFixed(1)} → ${r.meta.load.end[0]?.toFixed(1)})`).join(', ')} UTC.`,
  '',
);
for (const phase of (opt.phases ?? '').split(',')) {
  const rows = MEASURES.map((m) => {
    const values = (kind: ControllerKind): number[] =>
      runs.flatMap((r) => {
        const p = find(r, kind, phase);
        return p ? [m.of(p, kind, r.meta.apps * r.meta.replicas)] : [];
      });
    const ratios = runs.flatMap((r) => {
      const [e, s] = [find(r, 'ebb', phase), find(r, 'sts', phase)];
      const pods = r.meta.apps * r.meta.replicas;
      return e && s ? [m.of(e, 'ebb', pods) / m.of(s, 'sts', pods)] : [];
    });
    return [m.name, medianSpread(values('ebb'), show(m.digits)), medianSpread(values('sts'), show(m.digits)), medianSpread(ratios, show(2))];
  });
  out.push(`#### ${phase}`, table([phase, 'ebb', 'upstream', 'ebb ÷ upstream'], rows), '');
}
process.stdout.write(`${out.join('\n')}\n`);
