/**
 * The pull budget around one reconcile's pre-warm writes, settled by the plan loop as it settles the dry run:
 * the plan names what it needs of the budget (`budgetRequest`: finished pulls given back, running ones renewed,
 * new ones wanted), the loop asks once (`askBudget`) and plans again with the answer (`Observed.pullGrant`),
 * which keeps only the requests granted (`grantedOutcome`); the others are reported as waiting and tried again
 * shortly. Shares granted for requests that are not written (an earlier action failed, or the write itself)
 * are given back (`giveBack`). A budget that cannot be asked (Redis unreachable) grants nothing new:
 * pre-warming waits, the rollout never does.
 */
import { errorSummary } from '../../../common/errors.ts';
import type { Logger } from '../../../common/log.ts';
import type { Wait } from '../../types.ts';
import type { ObservedGrant, PrewarmOutcome } from '../model/prewarm-outcome.ts';
import type { PullBudget, PullBudgetRequest, PullGrant } from '../../shared/pull-budget.ts';
import { withinBudget } from './plan.ts';

/** Requests the budget had no room for are asked again this much later (other Apps' pulls end meanwhile). */
export const BUDGET_RETRY: Wait = { reason: 'prewarm-budget', afterMs: 5_000 };
/**
 * Requests past the namespace's ImageList entries are asked again this much later: entries are given back when a
 * rollout ends or a pool shrinks, not within seconds, and a namespace past its cap must not keep workers busy.
 */
export const ENTRIES_RETRY: Wait = { reason: 'prewarm-namespace-entries', afterMs: 60_000 };

/**
 * The plan, coming back when a pre-warm clock runs out (`PrewarmOutcome.wakeAt`: the pins of a waiting rollout
 * end, a silent node becomes overdue) if nothing brings it back sooner.
 */
export function withPrewarmWait<P extends { wait?: Wait | undefined; prewarm?: PrewarmOutcome | undefined }>(plan: P, now: Date): P {
  const at = plan.prewarm?.wakeAt;
  if (at === undefined) return plan;
  const afterMs = Math.max(1_000, at - now.getTime());
  return plan.wait && plan.wait.afterMs <= afterMs ? plan : { ...plan, wait: { reason: 'prewarm-timer', afterMs } };
}

/** What a plan's pre-warm outcome asks of the budget, or undefined when it asks nothing (no request, nothing held). */
export function budgetRequest(outcome: PrewarmOutcome | undefined): PullBudgetRequest | undefined {
  const use = outcome?.budget;
  if (!outcome || !use) return undefined;
  const want = outcome.actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [a.node] : []));
  if (want.length === 0 && use.pulling.length === 0 && use.done.length === 0) return undefined;
  // The nodes whose entries stay: counted against the namespace's entries, never taken back.
  const asked = new Set(want);
  const kept = [...use.states.keys()].filter((n) => !asked.has(n));
  return { pulling: use.pulling, done: use.done, want, kept, entriesPerNode: use.images ?? 0 };
}

/** Asks the budget once for holder `holder` (`<namespace>/<name>`); unreachable: nothing new granted. */
export async function askBudget(budget: PullBudget, holder: string, request: PullBudgetRequest, log: Logger): Promise<ObservedGrant> {
  let grant: PullGrant = { granted: [] };
  try {
    grant = await budget.settle(holder, request);
  } catch (err) {
    log.warn({ err: errorSummary(err), requests: request.want.length }, 'pre-warm pull budget unavailable; pre-warming waits');
  }
  const waiting = request.want.length - grant.granted.length;
  if (waiting > 0) log.debug({ granted: grant.granted.length, waiting, limitedBy: grant.limitedBy }, 'pre-warm requests wait for the pull budget');
  return { granted: new Set(grant.granted), limitedBy: grant.limitedBy };
}

/**
 * The outcome with only the granted requests, and the wait to ask again for the others (undefined when every
 * request was granted, or the budget was not asked). The pods counted on warm nodes stay as planned.
 */
export function grantedOutcome(outcome: PrewarmOutcome, grant: ObservedGrant | undefined): { prewarm: PrewarmOutcome; wait: Wait | undefined } {
  if (!grant) return { prewarm: outcome, wait: undefined };
  const within = withinBudget(outcome, grant.granted, grant.limitedBy);
  if (within === outcome) return { prewarm: outcome, wait: undefined };
  const landed = outcome.status?.podsOnWarmNodes;
  const status = within.status && landed !== undefined ? { ...within.status, podsOnWarmNodes: landed } : within.status;
  return { prewarm: { ...within, status }, wait: grant.limitedBy === 'namespaceEntries' ? ENTRIES_RETRY : BUDGET_RETRY };
}

/** Granted requests that were not written give their share back (best effort: a share not given back expires). */
export async function giveBack(budget: PullBudget, holder: string, nodes: readonly string[], log: Logger): Promise<void> {
  if (nodes.length === 0) return;
  await budget.settle(holder, { pulling: [], done: nodes, want: [] }).catch((err: unknown) => {
    log.debug({ err: errorSummary(err) }, 'could not give back pre-warm pull budget; the lease expires');
  });
}
