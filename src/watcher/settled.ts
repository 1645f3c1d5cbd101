/**
 * Whether an App is settled by its own status as last seen: ebb has acted on its current spec and found it
 * at the desired state. The watcher keeps this one bit per App so that a periodic resync can leave settled
 * Apps alone (an idle fleet then wakes no worker); every other resync reason is covered elsewhere (see
 * `resyncKeys`).
 */
import { DEFAULT_REPLICAS } from '../api/app-spec.ts';
import { ConditionStatus, ConditionType } from '../api/keys.ts';
import type { KubeObject } from '../kube/types.ts';

interface AppLike {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    prewarm?: unknown;
    conditions?: { type?: string; status?: string }[];
  };
}

/** Conditions that, while True, say the App still has work or is stuck: never settled. */
const UNSETTLED_WHEN_TRUE: ReadonlySet<string> = new Set([
  ConditionType.progressing,
  ConditionType.paused,
  ConditionType.invalidSpec,
  ConditionType.failedCreatePod,
  ConditionType.failedUpdatePod,
  ConditionType.rolloutHeld,
]);

/**
 * True when the status was computed from the current generation, every desired pod exists, is ready,
 * available and at one revision (current = update), no pre-warm is under way, and no condition says the
 * App is progressing, paused, held or failing. An object without status (or a metadata-only one) is not
 * settled. Conservative by design: a wrong "not settled" costs one reconcile at the next resync, a wrong
 * "settled" delays a repair until a full resync.
 */
export function appSettled(obj: KubeObject): boolean {
  const { spec, status } = obj as KubeObject & AppLike;
  const meta = obj.metadata ?? {};
  if (!status || meta.deletionTimestamp) return false;
  if (meta.generation === undefined || status.observedGeneration !== meta.generation) return false;
  const want = spec?.replicas ?? DEFAULT_REPLICAS;
  const counts = [status.replicas, status.readyReplicas, status.availableReplicas, status.currentReplicas, status.updatedReplicas];
  if (counts.some((n) => (n ?? 0) !== want)) return false;
  if (!status.updateRevision || status.currentRevision !== status.updateRevision) return false;
  if (status.prewarm !== undefined) return false;
  return !(status.conditions ?? []).some((c) => c.status === ConditionStatus.true && UNSETTLED_WHEN_TRUE.has(c.type ?? ''));
}
