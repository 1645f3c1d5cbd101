/** The revisions a plan works from (as read, or derived from the App's status) and the history it truncates. */
import type { App } from '../../../api/app.ts';
import type { ControllerRevision, Pod, Stored } from '../../../kube/types.ts';
import { getPodRevision } from '../pods/predicates.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import type { Action } from '../model/actions.ts';
import { derivedRevisions, resolveRevisions, truncateHistory, type ResolvedRevisions } from './revisions.ts';

/** The revisions as read (undefined: not read), of what a plan observed. */
type Read = { revisions: readonly Stored<ControllerRevision>[] | undefined };

/** What the history changes of a plan: the actions it adds, the revision count in its status. */
type Planned = { actions: Action[]; status: AppStatus };

function liveRevisions(owned: readonly Stored<Pod>[], revs: ResolvedRevisions, current: string | undefined): Set<string> {
  const live = new Set([current ?? revs.current.metadata.name, revs.update.metadata.name]);
  for (const pod of owned) {
    const r = getPodRevision(pod);
    if (r) live.add(r);
  }
  return live;
}

/** The revisions as read, or (not read) from the App's status; undefined when they must be read. */
export function revisionsOf(app: Stored<App>, observed: Read): ResolvedRevisions | undefined {
  return observed.revisions ? resolveRevisions(app, observed.revisions) : derivedRevisions(app);
}

/**
 * At most how many revisions the App controls once `actions` are written, from the revisions as read: those
 * owned, plus those created or adopted. Deletes are not subtracted (one that fails would leave the count
 * short): the count stays an upper bound, which is what lets a later plan skip a read.
 */
export function revisionCountAfter(owned: number, actions: readonly { kind: string }[]): number {
  return owned + actions.filter((a) => a.kind === 'createRevision' || a.kind === 'adoptRevision').length;
}

/**
 * Whether truncating the history cannot delete anything: at most `count` revisions are controlled, one of them
 * the update revision (always live), so at most `count - 1` are history. A negative limit keeps all of them.
 */
export function historyWithinLimit(count: number | undefined, limit: number): boolean {
  return limit < 0 || (count !== undefined && count - 1 <= limit);
}

/**
 * History truncated once the plan is made: the revision its status makes current is the one kept live (a
 * completing rollout frees the previous one). A plan made without the revisions (`derivedRevisions`) needs
 * them when its status moves the current revision, unless the status's revision count shows the history
 * within the limit: no revision is created, adopted or deleted without a plan that read them, so the
 * count recorded then still bounds how many there are.
 */
export function withHistory<P extends Planned>(
  app: Stored<App>,
  observed: Read,
  result: P,
  owned: readonly Stored<Pod>[],
  revs: ResolvedRevisions,
): P | { needs: 'revisions' } {
  const limit = app.spec.revisionHistoryLimit ?? 10;
  const known = app.status?.revisionCount;
  if (!observed.revisions) {
    if (result.status.currentRevision !== app.status?.currentRevision && !historyWithinLimit(known, limit)) return { needs: 'revisions' };
    if (known !== undefined) result.status.revisionCount = known;
    return result;
  }
  const live = liveRevisions(owned, revs, result.status.currentRevision);
  result.actions.push(...truncateHistory(revs.owned, live, limit));
  result.status.revisionCount = revisionCountAfter(revs.owned.length, revs.actions);
  return result;
}
