/**
 * A source run under supervision: whatever it throws (a bug, an answer it cannot take) restarts that source
 * alone after a capped backoff, logged and counted; the other sources and the process go on. Only the
 * caller's abort ends it.
 */
import { backoffMs } from '../common/backoff.ts';
import { errorMessage } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { sleep } from '../common/wait.ts';

export interface SupervisorDeps {
  signal: AbortSignal;
  log: Logger;
  onFailure(): void;
  backoff?: { baseMs: number; capMs: number };
}

export async function supervise(run: () => Promise<void>, deps: SupervisorDeps): Promise<void> {
  const backoff = deps.backoff ?? { baseMs: 1_000, capMs: 60_000 };
  for (let attempt = 1; !deps.signal.aborted; attempt++) {
    try {
      await run();
    } catch (err) {
      if (deps.signal.aborted) return;
      deps.onFailure();
      deps.log.error({ err: errorMessage(err), attempt }, 'source failed; restarting it');
    }
    if (deps.signal.aborted) return;
    await sleep(backoffMs(attempt, backoff.baseMs, backoff.capMs), deps.signal).catch(() => undefined);
  }
}
