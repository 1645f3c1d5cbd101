/**
 * The plan loop: read → plan → read what the plan lacks → plan again → dry-run the replacements of the pods it
 * would delete → plan again knowing what was refused. Its result is a complete plan, the only thing the
 * executor takes.
 */
import type { Logger } from '../../common/log.ts';
import { findRefusals, vouchByPods, type AdmissionVerdicts } from './admission/dry-run.ts';
import { replacementsToCheck } from './admission/replacement.ts';
import { isHeld } from './admission/rollout-held.ts';
import type { AppClient } from './model/client.ts';
import { plan, type PlanOptions } from './planner.ts';
import { needsInput, type Observed, type Plan } from './model/plan.ts';
import { readMore, readObserved } from './read.ts';

/** What the dry run before a delete needs: the verdicts remembered so far, and where to log; and the plan's options. */
interface AdmissionContext {
  verdicts: AdmissionVerdicts;
  log: Logger;
  options?: PlanOptions | undefined;
}

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
export async function planLoop(
  client: AppClient,
  namespace: string,
  name: string,
  now: () => Date,
  admission: AdmissionContext,
): Promise<{ observed: Observed; plan: Plan } | undefined> {
  // 1. Read the App, its pods, and its revisions unless the App's status names them.
  const first = await readObserved(client, namespace, name, { claims: 'lazy', revisions: 'lazy' });
  if (!first) return undefined;
  // 2. Plan, reading what the plan lacks.
  const options = admission.options;
  let read = await planWithInputs(client, first, now, options);
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
