import type { Arrow } from './import-graph.ts';

/**
 * The rooms of a folder: each direct subfolder is a room, its root files are the roof. An arrow between two
 * rooms is a room arrow (`pods → rollout`); an arrow from a room up to a root file is a back-arrow: a room
 * leaning on the roof, which imports every room.
 */
export interface RoomArrows {
  /** `from → to` room pairs, each with the imports that make it (`file:line → target`). */
  between: Map<string, string[]>;
  /** `file → root file` pairs, each with the imports that make it. */
  back: Map<string, string[]>;
}

export function roomArrows(arrows: readonly Arrow[], folder: string): RoomArrows {
  const prefix = `${folder}/`;
  const roomOf = (file: string): string | undefined => {
    if (!file.startsWith(prefix)) return undefined;
    const rest = file.slice(prefix.length);
    const slash = rest.indexOf('/');
    return slash < 0 ? '' : rest.slice(0, slash);
  };
  const between = new Map<string, string[]>();
  const back = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, arrow: Arrow): void => {
    map.set(key, [...(map.get(key) ?? []), `${arrow.from}:${arrow.line} → ${arrow.to}`]);
  };
  for (const arrow of arrows) {
    const from = roomOf(arrow.from);
    const to = roomOf(arrow.to);
    if (from === undefined || to === undefined || from === to || from === '') continue;
    if (to === '') add(back, `${arrow.from} → ${arrow.to}`, arrow);
    else add(between, `${from} → ${to}`, arrow);
  }
  return { between, back };
}

/**
 * What breaks the rooms' rules: a room arrow not on the allow-list or a back-arrow not on the ratchet list (each
 * named by its imports), and an entry of either list that no longer exists (so both lists stay true).
 */
export function roomProblems(found: RoomArrows, allowed: readonly string[], ratchet: readonly string[]): string[] {
  const problems: string[] = [];
  for (const [pair, imports] of [...found.between].sort()) {
    if (!allowed.includes(pair)) problems.push(`room arrow ${pair} is not allowed: ${imports.join(', ')}`);
  }
  for (const pair of allowed) {
    if (!found.between.has(pair)) problems.push(`room arrow ${pair} is gone: remove it from the allow-list`);
  }
  for (const [pair, imports] of [...found.back].sort()) {
    if (!ratchet.includes(pair)) problems.push(`new back-arrow (a room importing the roof): ${imports.join(', ')}`);
  }
  for (const pair of ratchet) {
    if (!found.back.has(pair)) problems.push(`back-arrow ${pair} is gone: remove it from the ratchet list`);
  }
  return problems;
}
