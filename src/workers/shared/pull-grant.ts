/**
 * What a pull-budget grant (`pull-budget.ts`) means for a holder's wanted nodes (pure): which are requested now,
 * how many wait and for which limit (the cluster's budget, the namespace's share of it, or its ImageList
 * entries), and when to ask again.
 */
import type { PullLimit } from './pull-budget.ts';

/** Wanted nodes the budget left out, and the limit that did. */
export interface Limited {
  refused: number;
  limitedBy?: PullLimit | undefined;
}

/** Nodes past the namespace's ImageList entries are asked for again this often (entries are given back slowly). */
export const ENTRIES_POLL_MS = 60_000;

/** The wanted nodes the grant allows, in order, and what it refused; no grant: every wanted node. */
export function applyGrant(
  wanted: readonly string[],
  grant: { granted: ReadonlySet<string>; limitedBy?: PullLimit | undefined } | undefined,
): { fresh: string[]; limited: Limited | undefined } {
  if (!grant) return { fresh: [...wanted], limited: undefined };
  const fresh = wanted.filter((n) => grant.granted.has(n));
  return { fresh, limited: { refused: wanted.length - fresh.length, limitedBy: grant.limitedBy } };
}

/** Whether the grant left a wanted node out. */
export const refusedAny = (limited: Limited | undefined): boolean => (limited?.refused ?? 0) > 0;

/** How soon to ask again for refused nodes: a minute past the namespace's entries, else `otherwiseMs`. */
export function retryAfterMs(limited: Limited | undefined, otherwiseMs: number): number {
  return limited?.limitedBy === 'namespaceEntries' ? ENTRIES_POLL_MS : otherwiseMs;
}

/** ` (N wait for …)` after a progress message when the grant refused nodes, else ''. */
export function refusedNote(limited: Limited | undefined): string {
  if (!limited || limited.refused <= 0) return '';
  return ` (${limited.refused} ${limited.refused === 1 ? 'waits' : 'wait'} ${waitingFor(limited.limitedBy)})`;
}

/** What nodes left out of a plan wait for, by the limit that left them out. */
export function waitingFor(limitedBy: PullLimit | undefined): string {
  switch (limitedBy) {
    case 'namespaceEntries':
      return "for room in the namespace's ImageList entries: its Apps and ImagePullJobs hold as many as it may (EBB_PREWARM_NAMESPACE_ENTRIES); they are not requested";
    case 'namespacePulls':
      return "for room in the namespace's share of the cluster's pre-warm pull budget (EBB_PREWARM_NAMESPACE_PULLS)";
    default:
      return "for room in the cluster's pre-warm pull budget";
  }
}
