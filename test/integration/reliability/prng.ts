import { seededRandom } from '../../../harness/seeded-random.ts';

/** A small seeded PRNG (mulberry32) and the picks the spec generators make with it: the same seed, the same specs. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A string of `length` characters from `alphabet`. */
  string(length: number, alphabet?: string): string;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function rng(seed: number): Rng {
  const next = seededRandom(seed);
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)] as T;
    },
    string: (length, alphabet = LOWER) => Array.from({ length }, () => alphabet[int(0, alphabet.length - 1)]).join(''),
  };
}

/** The seed of a run: `EBB_FUZZ_SEED` when set (to replay a failure), else a fresh one. */
export function fuzzSeed(env: Record<string, string | undefined> = process.env): number {
  const fixed = env['EBB_FUZZ_SEED'];
  if (fixed !== undefined && /^\d+$/.test(fixed)) return Number(fixed) >>> 0;
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
