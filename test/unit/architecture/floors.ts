import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cycleProblems } from './cycles.ts';
import { gateProblems } from './gates.ts';
import { propertyReads, readProblems } from './direct-reads.ts';
import { readGraph, sourceFiles } from './import-graph.ts';
import { reachInProblems, type ReachIn } from './reach-in.ts';
import { roomArrows, roomProblems } from './rooms.ts';

/** The floors of a tree (`floors.json` for `src/`): what may import what, and the ratchet lists that may only shrink. */
export interface Floors {
  /** Import cycles that still exist, each as its files: may only shrink. */
  cycles: string[][];
  rooms: {
    /** The folder whose direct subfolders are rooms and whose root files are the roof. */
    folder: string;
    /** `from → to` room arrows allowed. */
    allowed: string[];
    /** `file → root file` back-arrows that still exist: may only shrink. */
    backArrows: string[];
  };
  /** The App's folder: files outside it import only its ground floor, but for those listed (which only shrink). */
  reachIn: ReachIn;
  /** Gated files, each with the only files (or folders, ending in `/`) that may import it. */
  gates: Record<string, string[]>;
  direct: {
    /** The property read only by its resolver. */
    property: string;
    /** The one file that reads it. */
    resolver: string;
    /** Files that still read it directly, with how many reads: may only shrink. */
    reads: Record<string, number>;
  };
}

export const readFloors = (path: string): Floors => JSON.parse(readFileSync(path, 'utf8')) as Floors;

/** Everything the tree at `root` breaks of `floors`, each problem naming the import or read. */
export function floorProblems(root: string, floors: Floors): { cycles: string[]; rooms: string[]; reachIn: string[]; gates: string[]; reads: string[] } {
  const arrows = readGraph(root);
  const found = new Map<string, number[]>();
  for (const file of sourceFiles(root)) {
    if (file === floors.direct.resolver) continue;
    const lines = propertyReads(file, readFileSync(join(root, file), 'utf8'), floors.direct.property);
    if (lines.length > 0) found.set(file, lines);
  }
  return {
    cycles: cycleProblems(arrows, floors.cycles),
    rooms: roomProblems(roomArrows(arrows, floors.rooms.folder), floors.rooms.allowed, floors.rooms.backArrows),
    reachIn: reachInProblems(arrows, floors.reachIn),
    gates: gateProblems(arrows, floors.gates),
    reads: readProblems(found, floors.direct.reads, floors.direct.property),
  };
}
