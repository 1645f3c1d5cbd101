/**
 * How many `ebb worker` replicas KEDA and the HorizontalPodAutoscaler it creates would run for a reconcile
 * backlog, with the shipped ScaledObject (deploy/keda/scaledobject.yaml). Pure: the benchmark's scaler loop
 * (worker-pool.ts) feeds it one backlog reading at a time.
 *
 * The external metric is an AverageValue target (KEDA's default metric type), so the HPA wants
 * ceil(backlog / jobsPerWorker) replicas, keeps the current count while the ratio is within its 10 % tolerance,
 * and stays between 1 and maxReplicaCount while the scaler is active; KEDA itself takes the Deployment from 0 to 1
 * on activation and back to 0 after `cooldownPeriod` without activity. Scale-up is immediate (the HPA's default
 * scale-up stabilization is 0 s); a scale-down takes the largest recommendation of the last
 * `scaleDownStabilizationMs` (the HPA's default is 300 s). Not modelled: the HPA's 15 s sync period and its
 * scale-up rate policy (+100 % or +4 pods per 15 s), both of which would only slow ebb's scale-up.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../harness/sandbox/paths.ts';

export interface ScaleSpec {
  jobsPerWorker: number;
  /**
   * The trigger's `threadBacklog`: the backlog the watcher's scaler leaves to its worker thread (the metric it
   * answers is already net of it); undefined: not set (the scaler's default, `jobsPerWorker`).
   */
  threadBacklog?: number | undefined;
  minReplicas: number;
  maxReplicas: number;
  /** KEDA's cooldownPeriod: how long the scaler must be inactive before the workers go to minReplicas (0). */
  cooldownMs: number;
  /** The HPA's scale-down stabilization window. */
  scaleDownStabilizationMs: number;
  /** The HPA's tolerance (0.1): no change while |1 − backlog / (jobsPerWorker × current)| is within it. */
  tolerance: number;
}

interface ScaledObjectYaml {
  spec?: {
    minReplicaCount?: number;
    maxReplicaCount?: number;
    cooldownPeriod?: number;
    triggers?: { metadata?: Record<string, string> }[];
  };
}

/** The shipped ScaledObject's numbers (KEDA's defaults where it sets none), with the HPA's default behaviour. */
export function shippedScaleSpec(): ScaleSpec {
  const so = parse(readFileSync(join(PROJECT_ROOT, 'deploy', 'keda', 'scaledobject.yaml'), 'utf8')) as ScaledObjectYaml;
  const meta = so.spec?.triggers?.[0]?.metadata ?? {};
  const jobsPerWorker = Number(meta['jobsPerWorker'] ?? Number.NaN);
  if (!Number.isInteger(jobsPerWorker) || jobsPerWorker < 1) throw new Error('deploy/keda/scaledobject.yaml: no jobsPerWorker');
  const threadBacklog = meta['threadBacklog'];
  return {
    jobsPerWorker,
    ...(threadBacklog === undefined ? {} : { threadBacklog: Number(threadBacklog) }),
    minReplicas: so.spec?.minReplicaCount ?? 0,
    maxReplicas: so.spec?.maxReplicaCount ?? 100,
    cooldownMs: (so.spec?.cooldownPeriod ?? 300) * 1000,
    scaleDownStabilizationMs: 300_000,
    tolerance: 0.1,
  };
}

/** The HPA's recommendation for one reading (0 when the scaler is inactive). */
export function recommend(backlog: number, current: number, spec: ScaleSpec): number {
  if (backlog <= 0) return spec.minReplicas;
  const floor = Math.max(1, spec.minReplicas);
  if (current > 0 && Math.abs(1 - backlog / (spec.jobsPerWorker * current)) <= spec.tolerance) {
    return Math.min(spec.maxReplicas, Math.max(floor, current));
  }
  return Math.min(spec.maxReplicas, Math.max(floor, Math.ceil(backlog / spec.jobsPerWorker)));
}

/** Replica decisions over time: recommendations with KEDA's cooldown and the HPA's scale-down window. */
export class KedaScalePlanner {
  private readonly history: { at: number; rec: number }[] = [];
  private lastActive = Number.NEGATIVE_INFINITY;

  private readonly spec: ScaleSpec;

  constructor(spec: ScaleSpec) {
    this.spec = spec;
  }

  /** The replica count to run at `now` (ms) for `backlog`, with `current` replicas running. */
  next(now: number, backlog: number, current: number): number {
    const rec = recommend(backlog, current, this.spec);
    if (backlog > 0) this.lastActive = now;
    const keep = Math.max(this.spec.scaleDownStabilizationMs, 0);
    this.history.push({ at: now, rec });
    while (this.history.length > 0 && now - (this.history[0]?.at ?? now) > keep) this.history.shift();
    if (rec >= current) return rec;
    // Inactive: KEDA scales to minReplicas once the cooldown has passed since the last activity.
    if (backlog <= 0 && now - this.lastActive >= this.spec.cooldownMs) return rec;
    // Still inside the cooldown (or active): the HPA's floor is 1, and it scales down only to the largest
    // recommendation of its stabilization window.
    const floor = Math.max(1, this.spec.minReplicas);
    const windowMax = Math.max(...this.history.map((h) => Math.max(floor, h.rec)));
    return Math.min(current, windowMax);
  }
}
