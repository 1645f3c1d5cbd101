/**
 * What a plan reads and what it returns: `Observed` (the App and what was read of the cluster), a `Plan` (the
 * writes, the status, the wait), or `NeedsInput` naming the input to read before planning again.
 */
import type { AppStatus } from '../../../api/app-status.ts';
import type { Measurement } from '../../../api/analysis.ts';
import type { App } from '../../../api/app.ts';
import type { ImageList } from '../../../api/image-list.ts';
import type { ClusterStored, ControllerRevision, PersistentVolumeClaim, Pod, Stored } from '../../../kube/types.ts';
import type { Wait } from '../../types.ts';
import type { Refusals } from './refusals.ts';
import type { Action } from './actions.ts';
import type { NodeFacts } from './node-facts.ts';
import type { ObservedGrant, PrewarmOutcome } from './prewarm-outcome.ts';
import type { MeasureRequest, ResolvedCheck } from './analysis-io.ts';
import type { PrewarmPolicy } from './prewarm-policy.ts';

export interface Observed {
  app: Stored<App>;
  /** Pods matching the App's selector (any owner). */
  pods: Stored<Pod>[];
  /**
   * ControllerRevisions matching the App's selector (any owner). Undefined when not read: the plan takes them
   * from the App's status (`derivedRevisions`) or says it needs them (`{ needs: 'revisions' }`).
   */
  revisions: Stored<ControllerRevision>[] | undefined;
  /**
   * Claims that may belong to the App (by the selector's matchLabels, else the App label); looked up by name.
   * Undefined when not read: a plan that needs them says so (`{ needs: 'claims' }`) and is redone with them.
   */
  claims: Stored<PersistentVolumeClaim>[] | undefined;
  /**
   * The ImageLists holding this App's pre-warm entries (by the App's label). Undefined when not read: a plan
   * that needs them says so (`{ needs: 'imageLists' }`) and is redone with them.
   */
  imageLists?: ClusterStored<ImageList>[] | undefined;
  /**
   * The Nodes pre-warming may choose (a warm pool, a scale-up: `prewarm/nodes.ts`), by its label selector.
   * Undefined when not read: a plan that needs them says so (`{ needs: 'nodes' }`) and is redone with them.
   */
  nodes?: NodeFacts[] | undefined;
  /**
   * Revisions whose replacement pods a dry run found refused (`admission/dry-run.ts`): their deletes are left out
   * and the rollout is held. Undefined when no dry run was made (or none refused).
   */
  refused?: Refusals | undefined;
  /**
   * What the pull budget granted the plan's pre-warm requests (`prewarm/grant.ts`): only those are requested, the
   * others reported as waiting. Undefined when the budget was not asked (then every request of the plan stands).
   */
  pullGrant?: ObservedGrant | undefined;
  /**
   * Measurements of web checks taken for this plan, by check (`MeasureRequest.key`). Undefined when none
   * were taken: a plan with one due says so (`{ needs: 'measurements', measure }`).
   */
  measurements?: ReadonlyMap<string, Measurement> | undefined;
  /**
   * The App's analysis checks with the templates they name made concrete (`rollout/analysis/templates.ts`).
   * Undefined when no check names a template: the App's checks are used as they are.
   */
  checks?: ResolvedCheck[] | undefined;
}

export interface Plan {
  actions: Action[];
  /** The status once every action succeeded (it counts the pods the actions create, delete or start updating). */
  status: AppStatus;
  /** The status as read (nothing acted: `status/assemble.ts`), computed only on the failure path (when absent, `status`). */
  statusAsRead?: (() => AppStatus) | undefined;
  wait?: Wait | undefined;
  /** The pre-warm part of the plan, for the pull budget the plan loop asks (`prewarm/grant.ts`): its actions are in `actions`. */
  prewarm?: PrewarmOutcome | undefined;
}

/** Objects a plan may be made without at first (`Observed` leaves them undefined when not read). */
export type Unread = 'revisions' | 'claims' | 'imageLists' | 'nodes' | 'measurements';

/**
 * The plan cannot be made without `needs`, which was not read: read it and plan again. It has no actions, so
 * it cannot be handed to the executor by mistake (`execute` takes a `Plan`).
 */
export interface NeedsInput {
  needs: Unread;
  /** With `measurements`: the measurements due (web checks), to take and plan again with. */
  measure?: MeasureRequest[] | undefined;
}

export type PlanResult = Plan | NeedsInput;

export const needsInput = <T extends object>(result: T | NeedsInput): result is NeedsInput => 'needs' in result;

/** What the worker's settings decide for every App (absent: the defaults). */
export interface PlanOptions {
  prewarm?: PrewarmPolicy | undefined;
}
