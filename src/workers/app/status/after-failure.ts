/**
 * How a failed write changes the status the plan wanted to record (pure): the FailedCreatePod /
 * FailedUpdatePod condition (reason CreatePodRetrying while the refusal is one that heals with time),
 * InvalidSpec when the apiserver rejected a pod, a claim or the revision as invalid, and a collision count
 * bumped past a revision name taken by other data.
 */
import type { AppStatus } from '../../../api/app-status.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import type { Action } from '../model/actions.ts';
import { findCondition, setCondition } from '../../shared/conditions.ts';
import type { App } from '../../../api/app.ts';
import type { Stored } from '../../../kube/types.ts';
import { refusalMessage } from '../rollout/volume-growth.ts';

export interface FailureContext {
  action: Action;
  /** The KubeError code, e.g. Invalid, Forbidden, ServerError. */
  code: string | undefined;
  detail: string;
  /** The refusal heals with time (quota, rate limit, server error): the reconcile is retried with backoff. */
  heals: boolean;
  now: Date;
  generation: number | undefined;
}

export function statusAfterFailure(status: AppStatus, f: FailureContext): AppStatus {
  const { action } = f;
  if (action.kind === 'expandPvc') return f.heals ? status : expansionRefused(status, f, action);
  if (action.kind === 'createRevision') return f.code === 'Invalid' ? invalidRevision(status, f, action.revision.metadata.name) : status;
  return afterPodOrClaimFailure(status, f);
}

/** A pod or claim write failed. */
function afterPodOrClaimFailure(status: AppStatus, f: FailureContext): AppStatus {
  const { action } = f;
  let conditions = status.conditions;
  const update = (action.kind === 'deletePod' && action.cause === 'update') || action.kind === 'inPlaceStep';
  if (action.kind !== 'createPod' && action.kind !== 'createPvc' && !update) return status;
  if (action.kind === 'createPod' || action.kind === 'createPvc') {
    const what = action.kind === 'createPod' ? `Pod ${action.pod.metadata.name}` : `Claim ${action.pvc.metadata.name}`;
    const [reason, retry] = f.heals ? [Reason.createPodRetrying, '; retrying with backoff'] : [Reason.createPodFailed, ''];
    conditions = setCondition(
      conditions,
      { type: ConditionType.failedCreatePod, status: 'True', reason, message: `create ${what} failed: ${f.detail}${retry}` },
      f.now,
      f.generation,
    );
    if (f.code === 'Invalid') {
      const message = `the apiserver rejects the ${action.kind === 'createPod' ? 'pods' : 'claims'} of this spec: ${f.detail}`;
      conditions = setCondition(conditions, { type: ConditionType.invalidSpec, status: 'True', reason: Reason.specInvalid, message }, f.now, f.generation);
    }
  } else if (action.kind === 'deletePod' || action.kind === 'inPlaceStep') {
    conditions = setCondition(
      conditions,
      { type: ConditionType.failedUpdatePod, status: 'True', reason: Reason.updatePodFailed, message: `update of Pod ${action.name} failed: ${f.detail}` },
      f.now,
      f.generation,
    );
  }
  return { ...status, conditions };
}

/**
 * The apiserver refused the revision of this spec as invalid: the template carries something no object may
 * (the CRD lets through what it cannot check). Nothing can be created from it until the spec changes.
 */
function invalidRevision(status: AppStatus, f: FailureContext, name: string): AppStatus {
  const message = `the apiserver rejects the revision of this spec (ControllerRevision ${name}): ${f.detail}`;
  const conditions = setCondition(
    status.conditions,
    { type: ConditionType.invalidSpec, status: 'True', reason: Reason.specInvalid, message },
    f.now,
    f.generation,
  );
  return { ...status, conditions };
}

/** A claim may not grow (e.g. its StorageClass does not allow expansion): VolumeExpansionRefused names it. */
function expansionRefused(status: AppStatus, f: FailureContext, action: Extract<Action, { kind: 'expandPvc' }>): AppStatus {
  const message = refusalMessage(action.name, action.storage, action.pod, f.detail);
  const conditions = setCondition(
    status.conditions,
    { type: ConditionType.volumeExpansionRefused, status: 'True', reason: Reason.expansionRefused, message },
    f.now,
    f.generation,
  );
  return { ...status, conditions, expansionRefusedClaim: action.name };
}

/** The same expansion refused again for the same reason: the condition says so already, so no new Event. */
export function repeatsRefusal(app: Stored<App>, action: Action, detail: string, heals: boolean): boolean {
  if (action.kind !== 'expandPvc' || heals) return false;
  const c = findCondition(app.status?.conditions, ConditionType.volumeExpansionRefused);
  return c?.status === 'True' && c.message === refusalMessage(action.name, action.storage, action.pod, detail);
}

export function statusAfterCollision(status: AppStatus): AppStatus {
  return { ...status, collisionCount: (status.collisionCount ?? 0) + 1 };
}
