/**
 * Pure: what `ebb set image app/NAME container=image ...` writes. A JSON patch that tests, for each container it
 * changes, that the container at that index still has that name, then sets only that container's image: a
 * concurrent edit of anything else in the App is kept, and one that moved or renamed a container fails the
 * patch instead of landing the image on another container. (A merge patch of a custom resource replaces the
 * whole containers list: every other container's fields would be lost.)
 */
import type { App } from '../../api/app.ts';

/** One `container=image` argument; `container` `*` names every container and init container. */
export interface ImageAssignment {
  container: string;
  image: string;
}

export type ImagePlan =
  | { kind: 'patch'; ops: unknown[]; changed: string[] }
  /** Every named container already runs the image asked for. */
  | { kind: 'unchanged' }
  | { kind: 'refuse'; message: string };

interface Container {
  name?: string | undefined;
  image?: string | undefined;
}

const LISTS = ['initContainers', 'containers'] as const;

/** The patch setting the images, or why there is none (a container the App does not have). */
export function planSetImage(app: App, assignments: readonly ImageAssignment[]): ImagePlan {
  const spec = app.spec.template.spec as Partial<Record<(typeof LISTS)[number], Container[]>> | undefined;
  const wanted = new Map(assignments.map((a) => [a.container, a.image]));
  const all = wanted.get('*');
  const found = new Set<string>();
  const ops: unknown[] = [];
  const changed: string[] = [];
  for (const list of LISTS)
    (spec?.[list] ?? []).forEach((c, i) => {
      const name = c.name ?? '';
      const image = wanted.get(name) ?? all;
      if (image === undefined) return;
      found.add(name);
      if (c.image === image) return;
      const at = `/spec/template/spec/${list}/${i}`;
      ops.push({ op: 'test', path: `${at}/name`, value: name }, { op: 'add', path: `${at}/image`, value: image });
      changed.push(name);
    });
  const unknown = [...wanted.keys()].filter((n) => n !== '*' && !found.has(n));
  if (unknown.length > 0) {
    const have = LISTS.flatMap((l) => (spec?.[l] ?? []).map((c) => c.name ?? '')).join(', ');
    const which = unknown.map((n) => JSON.stringify(n)).join(', ');
    return { kind: 'refuse', message: `app "${app.metadata.name ?? ''}" has no container named ${which} (its containers: ${have || 'none'})` };
  }
  if (all !== undefined && found.size === 0) return { kind: 'refuse', message: `app "${app.metadata.name ?? ''}" has no containers` };
  return ops.length === 0 ? { kind: 'unchanged' } : { kind: 'patch', ops, changed };
}
