/**
 * What the pre-warm part of a plan comes to (`prewarm/plan.ts` makes it): its ImageList writes, `status.prewarm`
 * and condition ImagesPrewarmed, and what it means for the cluster's pull budget. Types only.
 */
import type { PrewarmStatus } from '../../../api/app-status.ts';
import type { ConditionInput } from '../../shared/conditions.ts';
import type { NodeState } from '../../shared/pull-state.ts';
import type { PullLimit } from '../../shared/pull-budget.ts';
import type { Action } from './actions.ts';

/** The actions of pre-warming. */
export type PrewarmAction = Extract<Action, { kind: 'requestPrewarm' | 'removePrewarm' }>;

/** What the outcome means for the cluster's pull budget, and enough to report it again with fewer requests. */
export interface BudgetUse {
  /** Nodes requested earlier whose pulls are still in progress: they keep their share of the budget. */
  pulling: string[];
  /** Nodes of this App's ImageLists with no pull of the current images in progress: their share is given back. */
  done: string[];
  /** Every requested node's state, the nodes requested now counted as pulling. */
  states: ReadonlyMap<string, NodeState>;
  revision: string;
  lookahead?: number | undefined;
  /** Said at the end of the condition's message (images the cap left out). */
  note?: string | undefined;
  /** ImageList entries the App holds on each requested node (its images, capped): counted against its namespace. */
  images?: number | undefined;
}

/** What the pull budget answered a plan, as the plan reads it again. */
export interface ObservedGrant {
  granted: ReadonlySet<string>;
  limitedBy?: PullLimit | undefined;
}

export interface PrewarmOutcome {
  actions: PrewarmAction[];
  /** undefined: no entries left (status.prewarm and the condition are removed). */
  status: PrewarmStatus | undefined;
  condition: ConditionInput | undefined;
  budget?: BudgetUse | undefined;
  /** When the App should be planned again even if nothing changes (pins end, a silent node is overdue), ms since the epoch. */
  wakeAt?: number | undefined;
}
