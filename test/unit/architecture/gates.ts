import type { Arrow } from './import-graph.ts';

/**
 * Gated files: a file only the files (or folders, ending in `/`) listed for it may import. The planner is one:
 * only the plan loop, the reconcile and `ebb rollout explain` make plans, every room below only contributes.
 * An allow-list, not a ratchet: an importer listed may stop importing the file.
 */
export function gateProblems(arrows: readonly Arrow[], gates: Readonly<Record<string, readonly string[]>>): string[] {
  const problems: string[] = [];
  for (const arrow of arrows) {
    const allowed = gates[arrow.to];
    if (allowed === undefined || arrow.from === arrow.to) continue;
    if (allowed.some((a) => (a.endsWith('/') ? arrow.from.startsWith(a) : arrow.from === a))) continue;
    problems.push(`${arrow.to} may be imported only by ${allowed.join(', ')}: ${arrow.from}:${arrow.line} → ${arrow.to}`);
  }
  return problems.sort();
}
