/** Heap and RSS after a full garbage collection, for before/after comparisons within one process. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface MemorySample {
  heapMiB: number;
  rssMiB: number;
}

const MiB = 1024 * 1024;

export function memorySample(): MemorySample {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapMiB: Math.round((m.heapUsed / MiB) * 10) / 10, rssMiB: Math.round((m.rss / MiB) * 10) / 10 };
}
