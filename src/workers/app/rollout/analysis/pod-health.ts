/**
 * The built-in provider, needing nothing but the pods already read: the health of the pods at the update
 * revision. Pure. One measurement judges every updated pod (not terminating) and fails on the first of:
 *
 * - a container waiting in CrashLoopBackOff (unless `allowCrashLoop`);
 * - more than `maxRestarts` restarts summed over the pod's containers (init containers included), counted since
 *   the pod reached the update revision: a pod updated in place is not charged the restarts it had before, nor the
 *   one restart the update gives each container whose image changed (`inplace/restart-baseline.ts`);
 * - not ready for longer than `maxNotReadySeconds`, counted from the Ready condition's last transition (or the
 *   pod's creation while it has none); the message names a readiness gate not True when one is the cause.
 *
 * While no pod runs the update revision it has no data (the check's `onNoData`); otherwise successful. The value
 * says what was seen.
 */
import { MeasurementPhase, type Measurement, type NoData, type PodHealth } from '../../../../api/analysis.ts';
import { noDataMeasurement } from './no-data.ts';
import type { Pod, Stored } from '../../../../kube/types.ts';
import { readyCondition } from '../../pods/predicates.ts';
import { restartsSinceRevision } from '../../../inplace/restart-baseline.ts';

export const DEFAULT_MAX_RESTARTS = 2;
export const DEFAULT_MAX_NOT_READY_SECONDS = 300;

interface PodVerdict {
  restarts: number;
  problem: string | undefined;
}

function crashLooping(pod: Pod): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return statuses.find((c) => c.state.waiting?.reason === 'CrashLoopBackOff')?.name;
}

function restartsOf(pod: Pod): number {
  return Object.values(restartsSinceRevision(pod)).reduce((sum, n) => sum + n, 0);
}

/** The first readiness gate whose condition is not True. */
function failingGate(pod: Pod): string | undefined {
  for (const gate of pod.spec.readinessGates ?? []) {
    const c = pod.status?.conditions?.find((x) => x.type === gate.conditionType);
    if (c?.status !== 'True') return gate.conditionType;
  }
  return undefined;
}

/** Seconds the pod has been not ready at `now`, or 0 when ready. */
function notReadySeconds(pod: Stored<Pod>, now: Date): number {
  const ready = readyCondition(pod);
  if (ready?.status === 'True') return 0;
  const since = Date.parse(ready?.lastTransitionTime ?? pod.metadata.creationTimestamp ?? '');
  return Number.isNaN(since) ? 0 : Math.max(0, (now.getTime() - since) / 1000);
}

function judgePod(pod: Stored<Pod>, limits: Required<PodHealth>, now: Date): PodVerdict {
  const name = pod.metadata.name;
  const restarts = restartsOf(pod);
  const looping = crashLooping(pod);
  if (looping !== undefined && !limits.allowCrashLoop) return { restarts, problem: `pod ${name}: container ${looping} in CrashLoopBackOff` };
  if (restarts > limits.maxRestarts) return { restarts, problem: `pod ${name}: ${restarts} restarts (limit ${limits.maxRestarts})` };
  const notReady = notReadySeconds(pod, now);
  if (notReady > limits.maxNotReadySeconds) {
    const gate = failingGate(pod);
    const why = gate === undefined ? 'not ready' : `readiness gate ${gate} not True`;
    return { restarts, problem: `pod ${name}: ${why} for ${Math.round(notReady)}s (limit ${limits.maxNotReadySeconds}s)` };
  }
  return { restarts, problem: undefined };
}

/** One measurement of `updated` (the pods at the update revision) against the limits of `spec`. */
export function measurePodHealth(spec: PodHealth, updated: readonly Stored<Pod>[], now: Date, onNoData?: NoData): Measurement {
  const limits: Required<PodHealth> = {
    maxRestarts: spec.maxRestarts ?? DEFAULT_MAX_RESTARTS,
    maxNotReadySeconds: spec.maxNotReadySeconds ?? DEFAULT_MAX_NOT_READY_SECONDS,
    allowCrashLoop: spec.allowCrashLoop ?? false,
  };
  const measuredAt = now.toISOString();
  const live = updated.filter((p) => p.metadata.deletionTimestamp === undefined);
  if (live.length === 0) return noDataMeasurement(onNoData, 'no pod runs the update revision yet', now);
  const verdicts = live.map((p) => judgePod(p, limits, now));
  const restarts = verdicts.reduce((sum, v) => sum + v.restarts, 0);
  const ready = live.filter((p) => readyCondition(p)?.status === 'True').length;
  const value = `${live.length} updated pods, ${ready} ready, ${restarts} restarts`;
  const failed = verdicts.find((v) => v.problem !== undefined);
  if (failed?.problem !== undefined) return { phase: MeasurementPhase.failed, value, message: failed.problem, measuredAt };
  return { phase: MeasurementPhase.successful, value, measuredAt };
}
