/** Reads what the planner needs, fresh from the apiserver on every reconcile (no cache). */
import { Label } from '../../api/keys.ts';
import type { Observed } from './planner.ts';
import type { AppClient } from './seams.ts';
import { selectorIsEmpty, selectorString } from './selector.ts';

/**
 * Claims carry the selector's matchLabels (as upstream StatefulSet claims do, so claims of a StatefulSet
 * migrated to an App are found) and the App label; the planner looks them up by name.
 */
function claimSelector(matchLabels: Record<string, string> | undefined, name: string): string {
  const labels = Object.entries(matchLabels ?? {});
  return labels.length > 0 ? selectorString({ matchLabels: Object.fromEntries(labels) }) : `${Label.app}=${name}`;
}

/** The App and the objects it may own, or undefined when the App is gone. */
export async function readObserved(client: AppClient, namespace: string, name: string): Promise<Observed | undefined> {
  const app = await client.apps.get(namespace, name);
  if (!app) return undefined;
  // An empty selector would list every pod of the namespace; the planner reports it as InvalidSpec instead.
  if (selectorIsEmpty(app.spec.selector)) return { app, pods: [], revisions: [], claims: [] };
  const selector = selectorString(app.spec.selector);
  const withClaims = (app.spec.volumeClaimTemplates ?? []).length > 0;
  const [pods, revisions, claims] = await Promise.all([
    client.pods.list(namespace, selector),
    client.revisions.list(namespace, selector),
    withClaims ? client.claims.list(namespace, claimSelector(app.spec.selector.matchLabels, name)) : Promise.resolve([]),
  ]);
  return { app, pods, revisions, claims };
}
