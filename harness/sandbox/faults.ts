/**
 * Pure parts of control-plane fault injection: in which order components go down and come back, and a
 * seeded random source so a failing trial can be replayed from its seed.
 */

/** The control-plane processes a test may restart. */
export type RestartTarget = 'etcd' | 'kube-apiserver' | 'kube-scheduler';

/**
 * Clients stop before what they depend on and start after it: the apiserver depends on etcd, the scheduler
 * on the apiserver.
 */
const DEPENDS_FIRST: readonly RestartTarget[] = ['etcd', 'kube-apiserver', 'kube-scheduler'];

/** Stop order (dependents first) and start order (dependencies first) of `targets`, without duplicates. */
export function restartOrder(targets: readonly RestartTarget[]): { stop: RestartTarget[]; start: RestartTarget[] } {
  const start = DEPENDS_FIRST.filter((t) => targets.includes(t));
  return { stop: [...start].reverse(), start };
}

export { seededRandom } from '../seeded-random.ts';

/** An integer in [min, max] from `random`. */
export function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
