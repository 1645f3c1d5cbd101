/**
 * Pure parts of control-plane fault injection: in which order components go down and come back, and a
 * seeded random source so a failing trial can be replayed from its seed.
 */

/** The control-plane processes a test may restart. */
export type RestartTarget = 'etcd' | 'kube-apiserver';

/** Clients stop before what they depend on and start after it: the apiserver depends on etcd. */
const DEPENDS_FIRST: readonly RestartTarget[] = ['etcd', 'kube-apiserver'];

/** Stop order (dependents first) and start order (dependencies first) of `targets`, without duplicates. */
export function restartOrder(targets: readonly RestartTarget[]): { stop: RestartTarget[]; start: RestartTarget[] } {
  const start = DEPENDS_FIRST.filter((t) => targets.includes(t));
  return { stop: [...start].reverse(), start };
}

/** A small deterministic PRNG (mulberry32): the same seed gives the same sequence in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** An integer in [min, max] from `random`. */
export function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
