/**
 * `scaling/` owns creating the missing replicas and removing condemned pods (this file), and the scale-up limit
 * (`scale-limit.ts`).
 *
 * Creating, replacing and removing pods (upstream processReplica / processCondemned). In OrderedReady mode
 * every step stops at the first pod that is not yet where it should be ("blocked"); in Parallel mode every
 * pod is handled at once.
 */
import type { DeleteCause } from '../model/actions.ts';
import type { PersistentVolumeClaim, Pod, Stored } from '../../../kube/types.ts';
import {
  getOrdinal,
  identityLabels,
  identityMatches,
  isFailed,
  isPending,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  isUnavailable,
} from '../pods/predicates.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';
import { claimsToCreate, retentionActions } from '../ownership/pvc-retention.ts';
import { RetentionPolicy } from '../../../api/app-spec.ts';
import { podForOrdinal, replacementFor } from '../rollout/replacement.ts';
import { deletePod } from '../pods/delete-pod.ts';
import { scaleUpGate } from './scale-limit.ts';

/** How long to look again while a claim of a missing pod is still being deleted (no watch on claims). */
const PVC_TERMINATING_RECHECK_MS = 1_000;

/**
 * The claims, for a step that must see them (creating a pod or its claims, scaling down). When they were not
 * read, the accumulator asks for them and the step is skipped: the plan is redone with them.
 */
function requiredClaims(set: PodSet, acc: Accumulator): ReadonlyMap<string, Stored<PersistentVolumeClaim>> | undefined {
  if (set.claims || (set.app.spec.volumeClaimTemplates ?? []).length === 0) return set.claims ?? NO_CLAIMS;
  acc.needsClaims = true;
  return undefined;
}

const NO_CLAIMS: ReadonlyMap<string, Stored<PersistentVolumeClaim>> = new Map();

/**
 * Whether the claims of `ordinal` are known to exist without reading them: a replica the App's status (of
 * this generation) counted, so it had a pod and the claims made with it, and claims that scaling never
 * deletes (whenScaled Retain). A claim removed by hand after that pod went is the exception: the new pod is
 * then unschedulable, which brings the App back (the watcher follows PodScheduled=False) to create it
 * (`pendingPodClaims`). Recreating a pod during a rollout so costs no claim LIST.
 */
function claimsKept(set: PodSet, ordinal: number): boolean {
  const { app } = set;
  const status = app.status;
  if (set.claims || !status || status.observedGeneration !== app.metadata.generation) return false;
  if (app.spec.persistentVolumeClaimRetentionPolicy?.whenScaled === RetentionPolicy.delete) return false;
  const index = set.ordinals.indexOf(ordinal);
  return index >= 0 && index < (status.replicas ?? 0);
}

function createReplica(set: PodSet, ordinal: number, acc: Accumulator): void {
  if (claimsKept(set, ordinal)) {
    const { pod, revision } = podForOrdinal(set, ordinal);
    acc.actions.push({ kind: 'createPod', pod, ordinal, revision });
    return;
  }
  const known = requiredClaims(set, acc);
  if (!known) return;
  const claims = claimsToCreate(set.app, known, ordinal);
  if (claims.terminating) {
    acc.waits.push({ reason: 'pvc-terminating', afterMs: PVC_TERMINATING_RECHECK_MS });
    return;
  }
  const { pod, revision } = podForOrdinal(set, ordinal);
  // Claims that already exist (kept from an earlier pod, or a migrated StatefulSet's) get the policy's owners.
  acc.actions.push(...claims.create, ...retentionActions(set.app, known, ordinal, undefined), {
    kind: 'createPod',
    pod,
    ordinal,
    revision,
  });
}

/**
 * An unscheduled pending pod's missing claims (deleted meanwhile) are created again, so it can be scheduled.
 * Once a pod is on a node its claims are in use and protected from deletion, so they are not listed again.
 */
function pendingPodClaims(set: PodSet, pod: Stored<Pod>, ordinal: number, acc: Accumulator): void {
  if (!isPending(pod) || isTerminating(pod) || pod.spec?.['nodeName']) return;
  const known = requiredClaims(set, acc);
  if (known) acc.actions.push(...claimsToCreate(set.app, known, ordinal).create);
}

/** Handles one replica ordinal; returns true when an OrderedReady App must not look further this time. */
function processReplica(set: PodSet, ordinal: number, acc: Accumulator): boolean {
  const pod = set.replicas.get(ordinal);
  if (!pod) {
    if (!set.createBlocked) createReplica(set, ordinal, acc);
    return set.monotonic;
  }
  if (isFailed(pod) || isSucceeded(pod)) {
    // Replaced in a later pass, once the old pod is gone (same name).
    if (!isTerminating(pod)) acc.actions.push(deletePod(pod, ordinal, 'failed', replacementFor(set, ordinal)));
    return set.monotonic;
  }
  pendingPodClaims(set, pod, ordinal, acc);
  if (set.monotonic && (isTerminating(pod) || !isRunningAndAvailable(pod, set.minReadySeconds, set.now))) return true;
  if (!identityMatches(set.app, pod, ordinal)) {
    acc.actions.push({
      kind: 'fixPodIdentity',
      name: pod.metadata.name,
      resourceVersion: pod.metadata.resourceVersion,
      labels: identityLabels(set.app.metadata.name, ordinal),
    });
  }
  // A running pod's claims got their owners when created; they are brought in line whenever the claims are
  // read (a create, a scale-down, a spec change), not listed for this alone.
  if (set.claims) acc.actions.push(...retentionActions(set.app, set.claims, ordinal, undefined));
  return false;
}

/** Every replica, ascending. Returns true when blocked (OrderedReady). */
export function planReplicas(set: PodSet, acc: Accumulator): boolean {
  const gate = scaleUpGate(set, acc);
  for (const ordinal of set.ordinals) {
    if (gate && !set.createBlocked && !set.replicas.has(ordinal) && !gate.admit()) continue;
    if (processReplica(set, ordinal, acc)) return true;
  }
  return false;
}

function firstUnavailableCondemned(set: PodSet): Pod | undefined {
  for (let i = set.condemned.length - 1; i >= 0; i--) {
    const pod = set.condemned[i];
    if (pod && isUnavailable(pod, set.minReadySeconds, set.now)) return pod;
  }
  return undefined;
}

/** A condemned pod inside [start, end) is there because its ordinal is reserved; any other, because of a scale-down. */
const condemnedCause = (set: PodSet, ordinal: number): DeleteCause => (ordinal >= set.start && ordinal < set.end ? 'reserved' : 'condemned');

/**
 * Condemned pods, highest ordinal first. Claims are given their retention owners before any pod goes, so the
 * garbage collector removes `whenScaled: Delete` claims with their pod. Returns true when blocked.
 */
export function planCondemned(set: PodSet, acc: Accumulator): boolean {
  const name = set.app.metadata.name;
  const known = set.condemned.length > 0 ? requiredClaims(set, acc) : NO_CLAIMS;
  if (!known) return true;
  for (const pod of set.condemned) acc.actions.push(...retentionActions(set.app, known, getOrdinal(name, pod.metadata.name), pod));
  const firstUnavailable = firstUnavailableCondemned(set);
  for (const pod of set.condemned) {
    if (isTerminating(pod)) {
      if (set.monotonic) return true;
      continue;
    }
    // OrderedReady scales down only through healthy pods, except the lowest unhealthy one (upstream).
    if (set.monotonic && !isRunningAndReady(pod) && pod !== firstUnavailable) return true;
    if (set.monotonic && !isRunningAndAvailable(pod, set.minReadySeconds, set.now) && pod !== firstUnavailable) return true;
    const ordinal = getOrdinal(name, pod.metadata.name);
    acc.actions.push(deletePod(pod, ordinal, condemnedCause(set, ordinal)));
    if (set.monotonic) return true;
  }
  return false;
}
