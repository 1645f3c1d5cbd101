/** Reads what the planner needs, fresh from the apiserver on every reconcile (no cache). */
import { Label, prewarmLabelKey } from '../../api/keys.ts';
import type { App } from '../../api/app.ts';
import type { ImageList } from '../../api/image-list.ts';
import type { ClusterStored, PersistentVolumeClaim, Stored } from '../../kube/types.ts';
import type { Logger } from '../../common/log.ts';
import { findRefusals, type AdmissionVerdicts } from './admission/dry-run.ts';
import { plan, type Observed, type Plan } from './planner.ts';
import { replacementsToCheck } from './admission/replacement.ts';
import { isHeld } from './admission/rollout-held.ts';
import type { AppClient } from './client.ts';
import { selectorIsEmpty, selectorString } from './pods/selector.ts';
import { derivedRevisions } from './revisions/revisions.ts';

/**
 * Claims carry the selector's matchLabels (as upstream StatefulSet claims do, so claims of a StatefulSet
 * migrated to an App are found) and the App label; the planner looks them up by name.
 */
function claimSelector(matchLabels: Record<string, string> | undefined, name: string): string {
  const labels = Object.entries(matchLabels ?? {});
  return labels.length > 0 ? selectorString({ matchLabels: Object.fromEntries(labels) }) : `${Label.app}=${name}`;
}

/** The claims that may belong to `app` (none to read when it has no volumeClaimTemplates). */
async function readClaims(client: AppClient, app: Stored<App>): Promise<Stored<PersistentVolumeClaim>[]> {
  if ((app.spec.volumeClaimTemplates ?? []).length === 0) return [];
  return client.claims.list(app.metadata.namespace, claimSelector(app.spec.selector.matchLabels, app.metadata.name));
}

/** The ImageLists holding pre-warm entries of App `namespace/name`: one LIST by the App's label. */
function readImageLists(client: AppClient, namespace: string, name: string): Promise<ClusterStored<ImageList>[]> {
  return client.imageLists.list(prewarmLabelKey(namespace, name));
}

/**
 * The App and the objects it may own, or undefined when the App is gone. With `claims: 'lazy'` the claims
 * are left unread (`undefined`): most reconciles do not need them, and a plan that does asks for them. With
 * `revisions: 'lazy'` the revisions are left unread when the App's status names them (`derivedRevisions`).
 */
export async function readObserved(
  client: AppClient,
  namespace: string,
  name: string,
  opts: { claims: 'always' | 'lazy'; revisions?: 'always' | 'lazy' } = { claims: 'always' },
): Promise<Observed | undefined> {
  const app = await client.apps.get(namespace, name);
  if (!app) return undefined;
  // An empty selector would list every pod of the namespace; the planner reports it as InvalidSpec instead.
  if (selectorIsEmpty(app.spec.selector)) return { app, pods: [], revisions: [], claims: [] };
  const selector = selectorString(app.spec.selector);
  const [pods, revisions, claims] = await Promise.all([
    client.pods.list(namespace, selector),
    opts.revisions === 'lazy' && derivedRevisions(app) ? Promise.resolve(undefined) : client.revisions.list(namespace, selector),
    opts.claims === 'always' ? readClaims(client, app) : Promise.resolve(undefined),
  ]);
  return { app, pods, revisions, claims };
}

/** What the dry run before a delete needs: the verdicts remembered so far, and where to log. */
interface AdmissionContext {
  verdicts: AdmissionVerdicts;
  log: Logger;
}

/**
 * Read → plan, reading the revisions, the claims and the pre-warm ImageLists only when the plan needs them (then planning
 * again with them). A plan that deletes pods to recreate them has their replacements dry-run first; when the
 * apiserver would refuse some, the plan is made again knowing it (those deletes left out, the rollout held).
 */
export async function observeAndPlan(
  client: AppClient,
  namespace: string,
  name: string,
  now: () => Date,
  admission: AdmissionContext,
): Promise<{ observed: Observed; plan: Plan } | undefined> {
  let observed = await readObserved(client, namespace, name, { claims: 'lazy', revisions: 'lazy' });
  if (!observed) return undefined;
  let result = plan(observed, now());
  if (result.needsRevisions) {
    observed = { ...observed, revisions: await client.revisions.list(namespace, selectorString(observed.app.spec.selector)) };
    result = plan(observed, now());
  }
  if (result.needsClaims) {
    observed = { ...observed, claims: await readClaims(client, observed.app) };
    result = plan(observed, now());
  }
  if (result.needsImageLists) {
    observed = { ...observed, imageLists: await readImageLists(client, namespace, name) };
    result = plan(observed, now());
  }
  let replacements = replacementsToCheck(result.actions);
  if (replacements.length === 0) return { observed, plan: result };
  // A held rollout may be held by a claim its replacement lacks: that is only seen with the claims read.
  if (observed.claims === undefined && (observed.app.spec.volumeClaimTemplates ?? []).length > 0 && isHeld(observed.app)) {
    observed = { ...observed, claims: await readClaims(client, observed.app) };
    result = plan(observed, now());
    replacements = replacementsToCheck(result.actions);
  }
  const refused = await findRefusals(client.dryRun, observed.app, replacements, admission.verdicts, admission.log);
  if (refused) {
    observed = { ...observed, refused };
    result = plan(observed, now());
  }
  return { observed, plan: result };
}
