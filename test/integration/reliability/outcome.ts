/** What became of a created App: Ready, or a condition that explains why not (pure, for the fuzz's bookkeeping). */
import type { App } from '../../../src/api/app.ts';
import { ConditionType, Reason } from '../../../src/api/keys.ts';

/** Conditions that explain an App that does not reach Ready. */
export const EXPLAINING: readonly string[] = [
  ConditionType.invalidSpec,
  ConditionType.failedCreatePod,
  ConditionType.failedUpdatePod,
  ConditionType.rolloutHeld,
];

/** `Ready`, the type of a True explaining condition, or undefined while neither holds. */
export function outcomeOf(app: App): string | undefined {
  const st = app.status;
  if (!st) return undefined;
  const explained = st.conditions?.find((c) => c.status === 'True' && EXPLAINING.includes(c.type));
  if (explained) return explained.type;
  const want = app.spec.replicas ?? 1;
  const ready =
    st.observedGeneration === app.metadata.generation && st.replicas === want && (st.readyReplicas ?? 0) === want && (st.updatedReplicas ?? 0) === want;
  return ready ? 'Ready' : undefined;
}

/** How many of an App's replicas a rollout updates: none with OnDelete, else the ordinals at or above the partition. */
export function expectedUpdated(app: App): number {
  const want = app.spec.replicas ?? 1;
  if (app.spec.updateStrategy?.type === 'OnDelete') return 0;
  const start = app.spec.ordinals?.start ?? 0;
  const partition = app.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  return Math.max(0, Math.min(want, start + want - partition));
}

/**
 * After a template change: `Rolled` once every replica is ready and as many are updated as the strategy
 * allows; a True explaining condition or an indefinite pause (a canary pause step, `paused: true`) explains a
 * rollout that stops.
 */
export function rolloutOutcomeOf(app: App): string | undefined {
  const st = app.status;
  if (!st || st.observedGeneration !== app.metadata.generation) return undefined;
  const explained = st.conditions?.find((c) => c.status === 'True' && EXPLAINING.includes(c.type));
  if (explained) return explained.type;
  // Paused until someone resumes it; a timed canary pause goes on by itself, so it is no outcome yet.
  const paused = st.conditions?.find((c) => c.type === ConditionType.paused && c.status === 'True');
  if (paused && paused.reason !== Reason.canaryTimedPause) return `Paused (${paused.reason})`;
  const want = app.spec.replicas ?? 1;
  const done = st.replicas === want && (st.readyReplicas ?? 0) === want && (st.updatedReplicas ?? 0) === expectedUpdated(app);
  return done ? 'Rolled' : undefined;
}

/** Counts by key, sorted by key, for a summary line. */
export function tally(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const k of [...keys].sort()) counts[k] = (counts[k] ?? 0) + 1;
  return counts;
}

/** The gaps between consecutive times (ms). */
export function intervals(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] ?? t));
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
