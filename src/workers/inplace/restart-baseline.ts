/**
 * The restart baseline of a pod updated in place: each container's restartCount when the pod reached a
 * revision, kept in annotation `apps.ebb.dev/restart-baseline` as `{revision, restarts}`. An in-place update
 * restarts every container whose image changes, and restartCount never goes back; the baseline lets the
 * analysis count only the restarts since the pod reached its revision.
 *
 * - A pod created at its revision needs none: its counts start at 0 there.
 * - A change that restarts nothing writes it with the revision label (the counts as they are).
 * - A restarting update writes it when it finishes; each updated container is allowed the one restart the update
 *   made it take, any other restart since the update started counts.
 * - While the update runs (the state annotation still there), the restarts of an updated container are those
 *   beyond its recorded count plus the update's own one.
 */
import { Annotation, Label } from '../../api/keys.ts';
import { isRecord } from '../../common/guards.ts';
import type { Pod } from '../../kube/types.ts';
import { readState, type InPlaceState } from './state.ts';

export interface RestartBaseline {
  revision: string;
  restarts: Record<string, number>;
}

const statusesOf = (pod: Pod) => [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];

/** The baseline of `pod` at `revision` as read now: every container's count as it is. */
export function baselineNow(pod: Pod, revision: string): RestartBaseline {
  return { revision, restarts: Object.fromEntries(statusesOf(pod).map((s) => [s.name, s.restartCount ?? 0])) };
}

/** The baseline when a restarting update finishes: an updated container's count before it, plus its one restart. */
export function baselineAtFinish(pod: Pod, state: InPlaceState): RestartBaseline {
  const now = baselineNow(pod, state.revision);
  for (const [name, count] of Object.entries(now.restarts)) {
    const old = state.oldRestartCounts[name];
    if (old !== undefined) now.restarts[name] = Math.min(count, old + 1);
  }
  return now;
}

export const serializeBaseline = (b: RestartBaseline): string => JSON.stringify(b);

/** The baseline on the pod, or undefined when absent or malformed. */
export function readBaseline(pod: Pod): RestartBaseline | undefined {
  const raw = pod.metadata.annotations?.[Annotation.restartBaseline];
  if (raw === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (!isRecord(v) || typeof v.revision !== 'string' || !isRecord(v.restarts)) return undefined;
    const restarts = Object.entries(v.restarts).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]));
    return { revision: v.revision, restarts: Object.fromEntries(restarts) };
  } catch {
    return undefined;
  }
}

/**
 * Restarts of `pod` since it reached the revision its label names, per container: against the baseline of
 * that revision, or the in-place update still finishing to it, or (neither: the pod was created there) all.
 */
export function restartsSinceRevision(pod: Pod): Record<string, number> {
  const revision = pod.metadata.labels?.[Label.revision];
  const state = readState(pod);
  const baseline = readBaseline(pod);
  const out: Record<string, number> = {};
  for (const s of statusesOf(pod)) {
    const count = s.restartCount ?? 0;
    if (state !== undefined && state.revision === revision) {
      // Finishing: an updated container may take its one restart; another container's count is not known here.
      const old = state.oldRestartCounts[s.name];
      out[s.name] = old === undefined ? 0 : Math.max(0, count - old - 1);
    } else if (baseline !== undefined && baseline.revision === revision) out[s.name] = Math.max(0, count - (baseline.restarts[s.name] ?? 0));
    else out[s.name] = count;
  }
  return out;
}
