/**
 * The real-node pull benchmark's report (bench/realnode-pull.ts): one row per side, then the floor, the transfer,
 * the goal and the bound one registry bandwidth puts under it (pull-goal.ts), and the canary's pause.
 */
import { medianGoal } from './pull-goal.ts';
import { median, medianSpread, table } from './report.ts';

export interface PullSide {
  run: number;
  config: string;
  ms: number;
  statusLagMs: number;
  pulling: number;
  present: number;
  pulledIn: string[];
  layerFetches: number;
  layerMB: number;
  daemonPulls: number;
  load: [number, number];
  /** floor: every node pulling the image at once through the proxy before the change. */
  transferMs?: number;
  /** canary: change → pause, pause → other nodes warm, resume → all Ready, kubelet Pulling after the resume. */
  canary?: { pauseMs: number; warmMs: number; afterMs: number; pullingAfter: number };
}

export interface PullSetup {
  configs: readonly string[];
  label: (config: string) => string;
  replicas: number;
  nodes: number;
  runs: number;
  rate: string;
  /** The image's size in bytes. */
  bytes: number;
}

const s1 = (ms: number): string => (ms / 1000).toFixed(1);
const spread = (xs: number[]): string => (Math.min(...xs) === Math.max(...xs) ? String(xs[0]) : medianSpread(xs, (n) => String(n)));

export function pullReport(sides: PullSide[], pulls: number[], setup: PullSetup): string {
  const by = (c: string): PullSide[] => sides.filter((s) => s.config === c);
  const upstream = median(by('sts').map((s) => s.ms));
  const floors = by('floor');
  const floorMs = median(floors.map((s) => s.ms));
  const goal = medianGoal(
    Array.from({ length: setup.runs }, (_, i) => {
      const f = floors.find((s) => s.run === i + 1);
      return { floorMs: f?.ms, transferMs: f?.transferMs, onePullMs: pulls[i] };
    }),
    setup.replicas,
  );
  const rows = setup.configs.map((c) => {
    const ss = by(c);
    const times = ss.map((s) => s.ms);
    return [
      setup.label(c),
      medianSpread(times, s1),
      Number.isFinite(upstream) ? (upstream / median(times)).toFixed(2) : '–',
      goal ? (median(times) / goal.goalMs).toFixed(2) : '–',
      goal ? (median(times) / goal.boundMs).toFixed(2) : '–',
      spread(ss.map((s) => s.pulling)),
      spread(ss.map((s) => s.present)),
      spread(ss.map((s) => s.layerFetches)),
      medianSpread(
        ss.map((s) => s.layerMB),
        (n) => n.toFixed(0),
      ),
      spread(ss.map((s) => s.daemonPulls)),
      medianSpread(
        ss.map((s) => s.statusLagMs),
        s1,
      ),
    ];
  });
  const mb = (setup.bytes / 1e6).toFixed(1);
  const floorLines = floors.map((f) => `run ${f.run}: floor ${s1(f.ms)} s, transfer ${f.transferMs === undefined ? '–' : s1(f.transferMs)} s`);
  const canaryLines = by('canary').flatMap((s) =>
    s.canary
      ? [
          `- run ${s.run} canary: change → pause ${s1(s.canary.pauseMs)} s; pause → other nodes Pulled ${s1(s.canary.warmMs)} s; resume → all Ready ${s1(s.canary.afterMs)} s (the floor's share of ${setup.replicas - 1} pods: ${
            Number.isFinite(floorMs) ? s1((floorMs * (setup.replicas - 1)) / setup.replicas) : '–'
          } s); kubelet Pulling after the resume ${s.canary.pullingAfter} (goal 0)`,
        ]
      : [],
  );
  return [
    `## Real nodes, pull-heavy: ${setup.replicas} replicas spread over ${setup.nodes} real nodes, ebb/app:v1 → a ${mb} MB image (one layer) through one ${setup.rate} MB/s loopback proxy shared by the nodes, image absent from every node before each side, maxUnavailable 1, OrderedReady, ${setup.runs} runs (median (min–max))`,
    '',
    table(
      [
        'config',
        'rollout s',
        'upstream ÷ this',
        'this ÷ goal',
        'this ÷ bound',
        'kubelet Pulling (pods that waited on a pull)',
        'Pulled "already present"',
        'layer fetches (registry)',
        'MB fetched',
        'daemon pulls',
        'status lag s',
      ],
      rows,
    ),
    '',
    `One cold pull of the ${mb} MB image through the proxy (CRI PullImage, no pod, one node alone), per run: ${pulls.map(s1).join(', ')} s.`,
    ...(floorLines.length > 0
      ? [
          `Floor (the rollout with the image on every node) and transfer (every node pulling it at once through the proxy, CRI, no pod): ${floorLines.join('; ')}.`,
        ]
      : []),
    goal
      ? `Goal (floor + one pull) × 1.1 = ${s1(goal.goalMs)} s; bound (transfer + floor ÷ ${setup.replicas}, one pod's step after all the bytes) = ${s1(goal.boundMs)} s: ${
          goal.unreachable
            ? 'the transfer alone is above the goal: out of reach for any rollout whose pulls start at the template change'
            : 'the transfer is below the goal'
        } (medians).`
      : 'No floor side: goal and bound not measured.',
    ...canaryLines,
    '',
    ...sides.map(
      (s) =>
        `- run ${s.run} ${setup.label(s.config)}: ${s1(s.ms)} s; Pulling ${s.pulling}${s.pulledIn.length > 0 ? ` (pulled in ${s.pulledIn.join(', ')})` : ''}, already present ${s.present}, layer fetches ${s.layerFetches} (${s.layerMB.toFixed(0)} MB), daemon pulls ${s.daemonPulls}; load ${s.load.map((n) => n.toFixed(2)).join('→')}`,
    ),
  ].join('\n');
}
