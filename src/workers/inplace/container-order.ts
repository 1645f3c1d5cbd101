/**
 * Container launch order for multi-container in-place updates: the pod (template) annotation
 * `Annotation.containerPriority` (`apps.ebb.dev/container-priority`) holds a JSON object from container name to
 * an integer rank, e.g. `{"envoy": 100, "app": 0}`. Containers without an entry rank 0. Updated containers are
 * patched in batches of equal rank, highest first; a batch starts only after the previous one runs its new
 * images and is ready. An annotation that is not such an object is ignored (every container ranks 0).
 */
/** Ranks by container name from the annotation value; invalid entries are ignored. */
export function parseLaunchOrder(value: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (value === undefined) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
  for (const [name, p] of Object.entries(parsed)) if (Number.isSafeInteger(p)) out.set(name, p as number);
  return out;
}

/** `names` grouped by priority, highest first; names keep their given order within a batch. */
export function launchBatches(names: readonly string[], priorities: ReadonlyMap<string, number>): string[][] {
  const byPriority = new Map<number, string[]>();
  for (const n of names) {
    const p = priorities.get(n) ?? 0;
    byPriority.set(p, [...(byPriority.get(p) ?? []), n]);
  }
  return [...byPriority.entries()].sort((a, b) => b[0] - a[0]).map(([, batch]) => batch);
}
