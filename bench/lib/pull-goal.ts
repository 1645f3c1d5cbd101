/**
 * The real-node pull benchmark's goal, and the bound one registry bandwidth puts under every strategy.
 *
 *   goal   (floor + one pull) × 1.1: the rollout with the new image already on every node, plus one pull alone
 *          on the proxy, plus 10 %.
 *   bound  transfer + floor ÷ replicas: with one bandwidth for the whole registry, every node must receive the
 *          whole image before the last pod can start (each node is its own image cache), so no rollout that
 *          starts its pulls when the template changes ends before all the bytes went through (`transfer`, every
 *          node pulling at once) plus the last pod's own step (the floor's share of one pod).
 *
 * When the bound is above the goal, the goal cannot be met by a rolling update that starts at the template
 * change, however the pulls are ordered: only pulls that start before the rollout needs them (a canary pause)
 * or a bandwidth per node can.
 */
import { median } from './report.ts';

export interface PullRun {
  /** The same rollout with the image on every node before the template change. */
  floorMs: number;
  /** One CRI pull of the image on one cold node, alone on the proxy. */
  onePullMs: number;
  /** Every node pulling the image at once through the proxy (CRI pulls, no pod): the time all the bytes take. */
  transferMs: number;
}

export interface PullGoal {
  goalMs: number;
  boundMs: number;
  /** The bound is above the goal: no rollout started at the template change can meet it. */
  unreachable: boolean;
}

export function pullGoal(run: PullRun, replicas: number): PullGoal {
  const goalMs = (run.floorMs + run.onePullMs) * 1.1;
  const boundMs = run.transferMs + run.floorMs / Math.max(1, replicas);
  return { goalMs, boundMs, unreachable: boundMs > goalMs };
}

/** The goal and bound from the medians of the runs' floors, single pulls and transfers; undefined without a floor. */
export function medianGoal(runs: readonly Partial<PullRun>[], replicas: number): PullGoal | undefined {
  const of = (k: keyof PullRun): number =>
    median(
      runs.flatMap((r) => {
        const v = r[k];
        return v === undefined ? [] : [v];
      }),
    );
  const run = { floorMs: of('floorMs'), onePullMs: of('onePullMs'), transferMs: of('transferMs') };
  return Object.values(run).every(Number.isFinite) ? pullGoal(run, replicas) : undefined;
}
