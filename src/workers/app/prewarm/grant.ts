/**
 * The pull budget around one reconcile's pre-warm writes: before them, the App settles its share (finished
 * pulls given back, running ones renewed) and only the requests the budget grants are written; the others
 * are reported as waiting and tried again shortly. After them, requests whose write failed give their share
 * back. A budget that cannot be asked (Redis unreachable) grants nothing new: pre-warming waits, the rollout
 * never does.
 */
import { errorSummary } from '../../../common/errors.ts';
import type { Logger } from '../../../common/log.ts';
import type { Wait } from '../../types.ts';
import type { Plan } from '../model/plan.ts';
import type { PullBudget, PullGrant } from './budget.ts';
import { withinBudget } from './plan.ts';
import { withPrewarmStatus } from './targets.ts';

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
export function withPrewarmWait(plan: Plan, now: Date): Plan {
  const at = plan.prewarm?.wakeAt;
  if (at === undefined) return plan;
  const afterMs = Math.max(1_000, at - now.getTime());
  return plan.wait && plan.wait.afterMs <= afterMs ? plan : { ...plan, wait: { reason: 'prewarm-timer', afterMs } };
}

export class BudgetHolder {
  private readonly budget: PullBudget;
  private readonly holder: string;
  private readonly log: Logger;

  /** `holder`: the App, `<namespace>/<name>`. */
  constructor(budget: PullBudget, holder: string, log: Logger) {
    this.budget = budget;
    this.holder = holder;
    this.log = log;
  }

  /** `plan` with only the pre-warm requests the budget grants, its status and wait saying so. */
  async grant(planned: Plan, now: Date, generation: number | undefined): Promise<Plan> {
    const plan = withPrewarmWait(planned, now);
    const outcome = plan.prewarm;
    const use = outcome?.budget;
    if (!outcome || !use) return plan;
    const want = outcome.actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [a.node] : []));
    if (want.length === 0 && use.pulling.length === 0 && use.done.length === 0) return plan;
    let grant: PullGrant = { granted: [] };
    // The nodes whose entries stay: counted against the namespace's entries, never taken back.
    const asked = new Set(want);
    const staying = [...use.states.keys()].filter((n) => !asked.has(n));
    try {
      grant = await this.budget.settle(this.holder, { pulling: use.pulling, done: use.done, want, kept: staying, entriesPerNode: use.images ?? 0 });
    } catch (err) {
      this.log.warn({ err: errorSummary(err), requests: want.length }, 'pre-warm pull budget unavailable; pre-warming waits');
    }
    const granted = grant.granted;
    const within = withinBudget(outcome, new Set(granted), grant.limitedBy);
    if (within === outcome) return plan;
    const kept = new Set(within.actions);
    const actions = plan.actions.filter((a) => !(a.kind === 'requestPrewarm' || a.kind === 'removePrewarm') || kept.has(a));
    const retry = grant.limitedBy === 'namespaceEntries' ? ENTRIES_RETRY : BUDGET_RETRY;
    const wait = plan.wait && plan.wait.afterMs <= retry.afterMs ? plan.wait : retry;
    this.log.debug(
      { granted: granted.length, waiting: want.length - granted.length, limitedBy: grant.limitedBy },
      'pre-warm requests wait for the pull budget',
    );
    return { ...plan, actions, status: withPrewarmStatus(plan.status, within, now, generation), wait, prewarm: within };
  }

  /** Requests whose write failed give their share back (best effort: a share not given back expires). */
  async giveBack(failures: readonly { node: string; request: boolean }[]): Promise<void> {
    const done = failures.filter((f) => f.request).map((f) => f.node);
    if (done.length === 0) return;
    await this.budget.settle(this.holder, { pulling: [], done, want: [] }).catch((err: unknown) => {
      this.log.debug({ err: errorSummary(err) }, 'could not give back pre-warm pull budget; the lease expires');
    });
  }
}
