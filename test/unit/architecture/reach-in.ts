import type { Arrow } from './import-graph.ts';

/** A folder others may import only through its open subfolders (the App's ground floor), and the files that still reach in. */
export interface ReachIn {
  folder: string;
  /** Subfolders (ending in `/`) any file may import. */
  open: string[];
  /** Files outside the folder that still import a file of it not in `open`: may only shrink. */
  files: string[];
}

/**
 * What breaks the ratchet of files reaching into a folder: a file outside it, not listed, importing a file of it
 * (open subfolders aside), named with the import; and a listed file that no longer does (remove it from the list).
 */
export function reachInProblems(arrows: readonly Arrow[], reachIn: ReachIn): string[] {
  const inside = (file: string): boolean => file.startsWith(`${reachIn.folder}/`);
  const open = (file: string): boolean => reachIn.open.some((o) => file.startsWith(o));
  const listed = new Set(reachIn.files);
  const reaching = new Set<string>();
  const problems: string[] = [];
  for (const arrow of arrows) {
    if (inside(arrow.from) || !inside(arrow.to) || open(arrow.to)) continue;
    reaching.add(arrow.from);
    if (!listed.has(arrow.from)) problems.push(`${arrow.from} reaches into ${reachIn.folder}: ${arrow.from}:${arrow.line} → ${arrow.to}`);
  }
  for (const file of listed) if (!reaching.has(file)) problems.push(`${file} no longer reaches into ${reachIn.folder}: remove it from the ratchet list`);
  return problems.sort();
}
