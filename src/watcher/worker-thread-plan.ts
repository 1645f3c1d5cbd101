/**
 * The rules of the watcher's worker thread (`EBB_WATCHER_WORKER_THREAD`), pure: its heap limits, why a thread
 * ended, and when the next one starts. `worker-thread.ts` runs them.
 */
import { backoffMs } from '../common/backoff.ts';

/** The thread's young generation: the worker process's (`--max-semi-space-size=4`: three semi-spaces). */
export const THREAD_YOUNG_GENERATION_MB = 12;

/** `resourceLimits` of the thread for an old space of `heapMb`. */
export function threadResourceLimits(heapMb: number): { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number } {
  return { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB };
}

/** Why a thread ended without being told to stop: its heap limit, an error it did not catch, or an exit. */
export type ThreadEnd = 'heap-limit' | 'error' | 'exit';

/** Classifies a thread's end from the error it reported (if any) and its exit code. */
export function threadEnd(err: unknown): ThreadEnd {
  if (err === undefined) return 'exit';
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  return code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'heap-limit' : 'error';
}

export interface RestartPolicy {
  baseMs: number;
  capMs: number;
  /** A thread that ran this long before it ended starts the back-off over. */
  healthyAfterMs: number;
}

export const RESTART_POLICY: RestartPolicy = Object.freeze({ baseMs: 1_000, capMs: 60_000, healthyAfterMs: 120_000 });

/**
 * After a thread that ran `ranMs` ended: the ends in a row counted so far (1 again after a healthy run) and the
 * delay before the next thread starts (capped exponential back-off with jitter).
 */
export function restartPlan(
  endsInARow: number,
  ranMs: number,
  policy: RestartPolicy = RESTART_POLICY,
  random: () => number = Math.random,
): { endsInARow: number; delayMs: number } {
  const ends = ranMs >= policy.healthyAfterMs ? 1 : endsInARow + 1;
  return { endsInARow: ends, delayMs: backoffMs(ends - 1, policy.baseMs, policy.capMs, random) };
}
