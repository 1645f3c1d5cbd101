/**
 * Growing claims during the rolling update (`volumeClaimUpdateStrategy: OnPodRollingUpdate`), pure like the
 * rest of the planner. The claim templates' storage requests are part of the revision, so a larger request is
 * a new revision and the rolling update walks the pods as for any other change: before an outdated pod is
 * updated, each of its bound claims asking for less than its template is patched to the template's request
 * (`expandPvc`), and the pod waits, holding its place in the maxUnavailable budget, until every claim reports
 * that capacity. The watcher does not watch claims, so the wait is a timer. A claim the apiserver refuses to
 * grow (its StorageClass does not allow expansion) is left as it is: the VolumeExpansionRefused condition and
 * an Event say why, the pod is not updated, and the expansion is tried again after a minute (a StorageClass
 * may be changed to allow it) or at once when the spec changes.
 */
import type { App } from '../../../api/app.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import { growsClaimsOnRollingUpdate } from '../../../api/volume-claim-update.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { parseQuantity } from '../../../common/quantity.ts';
import type { PersistentVolumeClaim, Pod, Stored } from '../../../kube/types.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import { claimName } from '../pods/builder.ts';
import type { Accumulator, PodSet } from '../pods/pod-set.ts';
import { storageOf } from '../revisions/claim-storage.ts';

/** How soon a claim being resized is looked at again (claims are not watched). */
export const CLAIM_RESIZE_RECHECK_MS = 2_000;
/** How long a refused expansion is left alone before it is tried again (unless the spec changes). */
export const EXPANSION_RETRY_MS = 60_000;
export const RESIZE_WAIT = 'pvc-resize';
export const EXPANSION_RETRY_WAIT = 'pvc-expansion-refused';

const requestOf = (c: PersistentVolumeClaim): string | undefined =>
  (c.spec?.['resources'] as { requests?: Record<string, unknown> } | undefined)?.requests?.['storage']?.toString();
const capacityOf = (c: PersistentVolumeClaim): string | undefined => (c.status?.['capacity'] as Record<string, unknown> | undefined)?.['storage']?.toString();
const isBound = (c: PersistentVolumeClaim): boolean => c.status?.phase === 'Bound' && typeof c.spec?.['volumeName'] === 'string';

/** What one claim of a pod about to be updated needs. */
type ClaimGrowth = { kind: 'ready' } | { kind: 'expand'; from: string | undefined } | { kind: 'resizing'; capacity: string | undefined };

/**
 * A claim is ready when it asks for at least `want` and reports that capacity. An unbound claim cannot be
 * expanded (the apiserver allows a larger request on bound claims only): it counts as ready, and is
 * provisioned at whatever it asks for.
 */
export function claimGrowth(claim: PersistentVolumeClaim, want: string): ClaimGrowth {
  const wanted = parseQuantity(want);
  if (wanted === undefined || !isBound(claim)) return { kind: 'ready' };
  const requested = parseQuantity(requestOf(claim));
  if (requested === undefined || requested < wanted) return { kind: 'expand', from: requestOf(claim) };
  const capacity = parseQuantity(capacityOf(claim));
  return capacity !== undefined && capacity >= wanted ? { kind: 'ready' } : { kind: 'resizing', capacity: capacityOf(claim) };
}

/** The message of the VolumeExpansionRefused condition (the claim itself is kept in `status.expansionRefusedClaim`). */
export function refusalMessage(claim: string, storage: string, pod: string, detail: string): string {
  return `claim ${claim} cannot grow to ${storage}: ${detail}; Pod ${pod} is not updated until the claim can grow (allowVolumeExpansion on its StorageClass) or is deleted with its pod`;
}

/** The claim a VolumeExpansionRefused=True condition of this generation is about, with when it was refused. */
function refusedClaim(app: Stored<App>): { claim: string; since: number } | undefined {
  const c = findCondition(app.status?.conditions, ConditionType.volumeExpansionRefused);
  if (c?.status !== 'True' || c.observedGeneration !== app.metadata.generation) return undefined;
  const claim = app.status?.expansionRefusedClaim;
  return claim === undefined ? undefined : { claim, since: Date.parse(c.lastTransitionTime) };
}

/**
 * Before outdated `pod` at `ordinal` is updated: grows its claims (OnPodRollingUpdate). Returns true when the
 * pod may be updated now; otherwise the expansions and timers are planned (or the claims asked for) and the
 * pod waits.
 */
export function claimsGrownFor(set: PodSet, acc: Accumulator, pod: Stored<Pod>, ordinal: number): boolean {
  const app = set.app;
  if (!growsClaimsOnRollingUpdate(app.spec.volumeClaimUpdateStrategy)) return true;
  const templates = (app.spec.volumeClaimTemplates ?? []).flatMap((t) => {
    const storage = storageOf(t);
    return storage === undefined ? [] : [{ name: claimName(t.metadata.name, app.metadata.name, ordinal), storage }];
  });
  if (templates.length === 0) return true;
  if (!set.claims) {
    acc.needsClaims = true;
    return false;
  }
  const refused = refusedClaim(app);
  let ready = true;
  for (const { name, storage } of templates) {
    const claim = set.claims.get(name);
    if (!claim || claim.metadata.deletionTimestamp) continue;
    const growth = claimGrowth(claim, storage);
    if (growth.kind === 'ready') continue;
    ready = false;
    if (growth.kind === 'resizing') {
      acc.waits.push({ reason: RESIZE_WAIT, afterMs: CLAIM_RESIZE_RECHECK_MS });
      continue;
    }
    const retryIn = refused?.claim === name ? refused.since + EXPANSION_RETRY_MS - set.now.getTime() : 0;
    if (retryIn > 0) {
      acc.waits.push({ reason: EXPANSION_RETRY_WAIT, afterMs: retryIn });
      continue;
    }
    acc.actions.push({
      kind: 'expandPvc',
      name,
      resourceVersion: claim.metadata.resourceVersion,
      storage,
      from: growth.from,
      pod: pod.metadata.name,
      ordinal,
    });
    acc.waits.push({ reason: RESIZE_WAIT, afterMs: CLAIM_RESIZE_RECHECK_MS });
  }
  return ready;
}

/**
 * VolumeExpansionRefused turns False once the claim it names no longer needs growing (it grew, was deleted,
 * or the spec changed); while the claims are not read it is left as it is.
 */
export function withExpansionCondition(status: AppStatus, set: PodSet): AppStatus {
  const previous = findCondition(status.conditions, ConditionType.volumeExpansionRefused);
  if (previous?.status !== 'True') return status;
  const claim = set.app.status?.expansionRefusedClaim;
  const kept = claim === undefined ? status : { ...status, expansionRefusedClaim: claim };
  const refused = refusedClaim(set.app);
  if (refused && !set.claims) return kept;
  if (refused && stillRefused(set, refused.claim)) return kept;
  const conditions = setCondition(
    status.conditions,
    { type: ConditionType.volumeExpansionRefused, status: 'False', reason: Reason.noExpansionRefused, message: 'no claim expansion is refused' },
    set.now,
    set.app.metadata.generation,
  );
  return { ...status, conditions };
}

/** Whether claim `name` still asks for less than its template. */
function stillRefused(set: PodSet, name: string): boolean {
  const claim = set.claims?.get(name);
  if (!claim || claim.metadata.deletionTimestamp) return false;
  const app = set.app;
  const ordinal = Number(name.slice(name.lastIndexOf('-') + 1));
  const template = (app.spec.volumeClaimTemplates ?? []).find((t) => claimName(t.metadata.name, app.metadata.name, ordinal) === name);
  const storage = template && storageOf(template);
  return storage !== undefined && claimGrowth(claim, storage).kind === 'expand';
}
