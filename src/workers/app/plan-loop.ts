/**
 * The plan loop: read → plan → read what the plan lacks → plan again → dry-run the replacements of the pods it
 * would delete → plan again knowing what was refused → ask the pull budget for the pre-warm requests → plan
 * again with its grant. Its result is a complete plan, the only thing the executor takes. The worker runs it;
 * so does `ebb rollout explain`, with a client that cannot write, no dry run and no budget.
 */
import type { Logger } from '../../common/log.ts';
import { findRefusals, vouchByPods, type AdmissionVerdicts } from './admission/dry-run.ts';
import { replacementsToCheck } from './admission/replacement.ts';
import { isHeld } from './admission/rollout-held.ts';
import type { AppClient } from './model/client.ts';
import type { PullBudget } from '../shared/pull-budget.ts';
import { askBudget, budgetRequest } from './prewarm/grant.ts';
import { plan } from './planner.ts';
import { needsInput, type Observed, type Plan, type PlanOptions } from './model/plan.ts';
import { readMore, readObserved } from './read.ts';

/** Where to log, the plan's options, and what the loop settles besides reads. */
export interface PlanLoopContext {
  log: Logger;
  options?: PlanOptions | undefined;
  /** The dry run before a delete, with the verdicts remembered so far; absent: no dry run (a caller that only reads). */
  verdicts?: AdmissionVerdicts | undefined;
  /** The cluster's pre-warm pull budget; absent: not asked, every pre-warm request of the plan stands. */
  budget?: PullBudget | undefined;
}

type Planned = { observed: Observed; plan: Plan };

/**
 * Plans until the plan is complete: while it names an input that was not read, that input is read and the
 * plan made again. Ends after at most three reads (revisions, claims, ImageLists: each read once).
 */
async function planWithInputs(client: AppClient, observed: Observed, now: () => Date, options?: PlanOptions): Promise<{ observed: Observed; plan: Plan }> {
  let result = plan(observed, now(), options);
  while (needsInput(result)) {
    observed = await readMore(client, observed, result.needs, { measure: result.measure ?? [], now });
    result = plan(observed, now(), options);
  }
  return { observed, plan: result };
}

/**
 * The App as read and its complete plan, or undefined when the App is gone. Most reconciles need one read
 * and one plan: the revisions are taken from the App's status, the claims and ImageLists only read when a
 * phase needs them.
 */
export async function planLoop(client: AppClient, namespace: string, name: string, now: () => Date, context: PlanLoopContext): Promise<Planned | undefined> {
  // 1. Read the App, its pods, and its revisions unless the App's status names them.
  const first = await readObserved(client, namespace, name, { claims: 'lazy', revisions: 'lazy' });
  if (!first) return undefined;
  return planFrom(client, first, now, context);
}

/** The plan loop from a first read on (`ebb rollout explain` makes that read itself, with the ImageLists). */
export async function planFrom(client: AppClient, first: Observed, now: () => Date, context: PlanLoopContext): Promise<Planned> {
  // 2. Plan, reading what the plan lacks.
  const read = await planWithInputs(client, first, now, context.options);
  // 3.-4. The dry run, then 5. the pull budget.
  const admitted = context.verdicts ? await dryRunDeletes(client, read, now, { ...context, verdicts: context.verdicts }) : read;
  return context.budget ? grantPrewarm(client, admitted, now, { ...context, budget: context.budget }) : admitted;
}

/** The plan again, with only the pre-warm requests the budget grants (asked once: the grant is the budget's write). */
async function grantPrewarm(client: AppClient, read: Planned, now: () => Date, context: PlanLoopContext & { budget: PullBudget }): Promise<Planned> {
  const request = budgetRequest(read.plan.prewarm);
  if (!request) return read;
  const { app } = read.observed;
  const pullGrant = await askBudget(context.budget, `${app.metadata.namespace}/${app.metadata.name}`, request, context.log);
  return planWithInputs(client, { ...read.observed, pullGrant }, now, context.options);
}

/** Dry-runs the replacements of the pods the plan would delete; plans again when the apiserver would refuse some. */
async function dryRunDeletes(
  client: AppClient,
  planned: Planned,
  now: () => Date,
  admission: PlanLoopContext & { verdicts: AdmissionVerdicts },
): Promise<Planned> {
  let read = planned;
  const options = admission.options;
  // 3. A plan that deletes no pod to recreate it needs no dry run.
  if (replacementsToCheck(read.plan.actions).length === 0) return read;
  // A held rollout may be held by a claim its replacement lacks: that is only seen with the claims read.
  const { app } = read.observed;
  if (read.observed.claims === undefined && (app.spec.volumeClaimTemplates ?? []).length > 0 && isHeld(app))
    read = await planWithInputs(client, await readMore(client, read.observed, 'claims'), now, options);
  // 4. Dry-run the replacements no live pod vouches for; when the apiserver would refuse some, plan again knowing it (those deletes
  // left out, the rollout held).
  const replacements = replacementsToCheck(read.plan.actions);
  vouchByPods(admission.verdicts, app, read.observed.pods, replacements);
  const refused = await findRefusals(client.dryRun, app, replacements, admission.verdicts, admission.log);
  if (!refused) return read;
  return planWithInputs(client, { ...read.observed, refused }, now, options);
}
