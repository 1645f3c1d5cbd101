import type { Arrow } from './import-graph.ts';

/**
 * The import cycles of a graph, one per strongly connected component of more than one file (or a file that
 * imports itself): each as the chain of files `a → b → … → a`, the shortest cycle through the component's
 * first file in name order, so a failure names a path a person can follow and cut.
 */
export function importCycles(arrows: readonly Arrow[]): string[][] {
  const next = adjacency(arrows);
  return cyclic(next)
    .map((c) => shortestCycle(c[0] ?? '', new Set(c), next))
    .sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/** The files of each cycle's component (sorted), so a test can say which files a cycle binds. */
export function cycleComponents(arrows: readonly Arrow[]): string[][] {
  return cyclic(adjacency(arrows));
}

function cyclic(next: Map<string, Set<string>>): string[][] {
  return components(next)
    .filter((c) => c.length > 1 || (next.get(c[0] ?? '')?.has(c[0] ?? '') ?? false))
    .map((c) => [...c].sort());
}

function adjacency(arrows: readonly Arrow[]): Map<string, Set<string>> {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of arrows) {
    if (!next.has(to)) next.set(to, new Set());
    const out = next.get(from) ?? new Set<string>();
    out.add(to);
    next.set(from, out);
  }
  return next;
}

/** Tarjan's strongly connected components, iterative (a deep chain of imports must not overflow the stack). */
function components(next: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  for (const root of [...next.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; children: string[]; at: number }[] = [];
    const open = (node: string): void => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: [...(next.get(node) ?? [])].sort(), at: 0 });
    };
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const child = frame.children[frame.at];
      if (child !== undefined) {
        frame.at += 1;
        if (!index.has(child)) open(child);
        else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      found.push(component);
    }
  }
  return found;
}

/** The shortest chain `start → … → start` inside `within` (breadth first). */
function shortestCycle(start: string, within: Set<string>, next: Map<string, Set<string>>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i += 1) {
    const node = queue[i]!;
    for (const child of [...(next.get(node) ?? [])].sort()) {
      if (!within.has(child)) continue;
      if (child === start) {
        const chain = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) chain.splice(1, 0, at);
        return [...chain, start];
      }
      if (cameFrom.has(child)) continue;
      cameFrom.set(child, node);
      queue.push(child);
    }
  }
  return [start, start];
}

/**
 * What breaks the rule "no import cycle": each cycle (named by its chain) whose files are not exactly those of a
 * cycle on the ratchet list `known` (a cycle that grows is a new one), and each listed cycle that is gone.
 */
export function cycleProblems(arrows: readonly Arrow[], known: readonly (readonly string[])[]): string[] {
  const key = (files: readonly string[]): string => [...files].sort().join(' ');
  const knownKeys = new Set(known.map(key));
  const found = cycleComponents(arrows);
  const foundKeys = new Set(found.map(key));
  const chains = importCycles(arrows);
  const problems = found
    .filter((files) => !knownKeys.has(key(files)))
    .map((files) => {
      const chain = chains.find((c) => files.includes(c[0] ?? '')) ?? files;
      return `import cycle: ${chain.join(' → ')}${files.length > chain.length - 1 ? ` (binding ${files.join(', ')})` : ''}`;
    });
  for (const files of known) if (!foundKeys.has(key(files))) problems.push(`cycle ${key(files)} is gone: remove it from the ratchet list`);
  return problems;
}
