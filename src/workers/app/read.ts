/** Reads what the planner needs, fresh from the apiserver on every reconcile (no cache). */
import { Label } from '../../api/keys.ts';
import { prewarmLabelKey } from '../../api/prewarm-keys.ts';
import type { App } from '../../api/app.ts';
import type { ImageList } from '../../api/image-list.ts';
import type { ClusterStored, PersistentVolumeClaim, Stored } from '../../kube/types.ts';
import type { Observed, Unread } from './model/plan.ts';
import type { AppClient } from './model/client.ts';
import { selectorIsEmpty, selectorString } from './pods/selector.ts';
import { derivedRevisions } from './revisions/revisions.ts';
import type { MeasureRequest } from './model/analysis-io.ts';
import { takeMeasurements } from './rollout/analysis/measure.ts';
import { readResolvedChecks } from './rollout/analysis/template-read.ts';
import { nodeFacts, nodeReadSelector } from './prewarm/nodes.ts';
import { EventReason } from '../../api/keys.ts';
import { isKubeError } from '../../kube/errors.ts';
import { RECONCILE_READ_BUDGET_BYTES } from './rest-client.ts';

/**
 * A read of `app`'s objects that a TooLarge KubeError ended (`RECONCILE_READ_BUDGET_BYTES`, or one object over
 * the page cap): a Warning Event says so on the App, and the error goes on (permanent: this reconcile fails
 * alone, the worker and its other reconciles go on).
 */
async function reportingTooLarge<T>(client: AppClient, app: Stored<App>, read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (err) {
    if (!isKubeError(err, 'TooLarge')) throw err;
    const what = err.budget
      ? `the objects the App selects (pods, revisions, claims) are more than one reconcile reads (${RECONCILE_READ_BUDGET_BYTES} bytes)`
      : `one of the objects the App selects is larger than one answer may be (${err.limitBytes ?? 0} bytes)`;
    const message = `${what}: ebb does not reconcile this App until they are fewer or smaller`;
    await client.events.record(app, { type: 'Warning', reason: EventReason.readTooLarge, action: 'Reconcile', message }, new Date()).catch(() => undefined);
    throw err;
  }
}

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
  const [pods, revisions, claims, checks] = await reportingTooLarge(
    client,
    app,
    Promise.all([
      client.pods.list(namespace, selector),
      opts.revisions === 'lazy' && derivedRevisions(app) ? Promise.resolve(undefined) : client.revisions.list(namespace, selector),
      opts.claims === 'always' ? readClaims(client, app) : Promise.resolve(undefined),
      readResolvedChecks(client.checkTemplates, app),
    ]),
  );
  return { app, pods, revisions, claims, ...(checks ? { checks } : {}) };
}

/**
 * `observed` with `unread` read. Each input is read once per reconcile: a plan asks only for what is
 * undefined, so asking again for something read is a planner bug, not a reason to read it twice.
 */
export async function readMore(
  client: AppClient,
  observed: Observed,
  unread: Unread,
  measuring: { measure: readonly MeasureRequest[]; now: () => Date } = { measure: [], now: () => new Date() },
): Promise<Observed> {
  const { app } = observed;
  if (observed[unread] !== undefined) throw new Error(`internal: the plan asked for the ${unread}, which were read`);
  switch (unread) {
    case 'revisions':
      return { ...observed, revisions: await reportingTooLarge(client, app, client.revisions.list(app.metadata.namespace, selectorString(app.spec.selector))) };
    case 'claims':
      return { ...observed, claims: await reportingTooLarge(client, app, readClaims(client, app)) };
    case 'imageLists':
      return { ...observed, imageLists: await readImageLists(client, app.metadata.namespace, app.metadata.name) };
    case 'nodes':
      return { ...observed, nodes: (await client.nodes.list(nodeReadSelector(app))).map(nodeFacts) };
    case 'measurements':
      return { ...observed, measurements: await takeMeasurements(client.analysis, app, measuring.measure, measuring.now, client.measureDesk) };
  }
}
