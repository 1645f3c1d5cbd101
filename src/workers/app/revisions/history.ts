/** The revisions a plan works from (as read, or derived from the App's status) and the history it truncates. */
import type { App } from '../../../api/app.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { getPodRevision } from '../pods/predicates.ts';
import type { Observed, Plan, PlanResult } from '../planner.ts';
import { derivedRevisions, resolveRevisions, truncateHistory, type ResolvedRevisions } from './revisions.ts';

function liveRevisions(owned: readonly Stored<Pod>[], revs: ResolvedRevisions, current: string | undefined): Set<string> {
  const live = new Set([current ?? revs.current.metadata.name, revs.update.metadata.name]);
  for (const pod of owned) {
    const r = getPodRevision(pod);
    if (r) live.add(r);
  }
  return live;
}

/** The revisions as read, or (not read) from the App's status; undefined when they must be read. */
export function revisionsOf(app: Stored<App>, observed: Observed): ResolvedRevisions | undefined {
  return observed.revisions ? resolveRevisions(app, observed.revisions) : derivedRevisions(app);
}

/**
 * History truncated once the plan is made: the revision its status makes current is the one kept live (a
 * completing rollout frees the previous one). A plan made without the revisions (`derivedRevisions`) needs
 * them when its status moves the current revision.
 */
export function withHistory(app: Stored<App>, observed: Observed, result: Plan, owned: readonly Stored<Pod>[], revs: ResolvedRevisions): PlanResult {
  if (!observed.revisions && result.status.currentRevision !== app.status?.currentRevision) return { needs: 'revisions' };
  const live = liveRevisions(owned, revs, result.status.currentRevision);
  result.actions.push(...truncateHistory(revs.owned, live, app.spec.revisionHistoryLimit ?? 10));
  return result;
}
