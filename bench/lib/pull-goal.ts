/**
 * The real-node pull benchmark's goal, and the bound one registry bandwidth puts under every strategy.
 *
 *   goal      (floor + one pull) × 1.1: the rollout with the new image already on every node, plus one pull
 *             alone on the proxy, plus 10 %.
 *   transfer  every node pulling the image at once through the proxy, measured. With one bandwidth for the whole
 *             registry and each node its own image cache, every node's copy must have crossed the link before
 *             the last pod can start (the pods before it started earlier, on their own copies), so no rollout
 *             whose pulls start at the template change ends before the transfer: a hard lower bound.
 *   bound     transfer + floor ÷ replicas: the transfer plus the last pod's own step, the best a rolling update can
 *             hope for (the last pod's stop and the controller's turn may overlap the pull, so this is an
 *             estimate, not a proof; the transfer alone is the proof).
 *
 * When the transfer is above the goal, no rollout that starts its pulls at the template change can meet it,
 * however the pulls are ordered: only pulls that start before the rollout needs them (a canary pause) or a
 * bandwidth per node can.
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
  /** The transfer alone is above the goal: no rollout whose pulls start at the template change can meet it. */
  unreachable: boolean;
}

export function pullGoal(run: PullRun, replicas: number): PullGoal {
  const goalMs = (run.floorMs + run.onePullMs) * 1.1;
  const boundMs = run.transferMs + run.floorMs / Math.max(1, replicas);
  return { goalMs, boundMs, unreachable: run.transferMs > goalMs };
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
