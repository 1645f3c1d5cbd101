/** The deadline explain puts on its Redis reads (`--queue-timeout`). */
import { sleep } from '../../../common/wait.ts';

/** Races `work` against a deadline; the loser is ignored (a late failure is nobody's to report). */
export async function within<T>(work: Promise<T>, deadlineMs: number): Promise<T> {
  const ac = new AbortController();
  work.catch(() => undefined);
  const late = sleep(deadlineMs, ac.signal).then(
    () => Promise.reject(new Error(`no answer within ${deadlineMs / 1000}s`)),
    () => new Promise<never>(() => undefined),
  );
  try {
    return await Promise.race([work, late]);
  } finally {
    ac.abort();
  }
}
