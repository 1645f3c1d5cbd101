import type { Logger } from '../common/log.ts';

/** How long the watcher may take to stop (it has no long-running work; Redis being down must not hang it). */
export const WATCHER_STOP_DEADLINE_MS = 15_000;
/** What the worker may take beyond its configured wait for running reconciles. */
export const WORKER_STOP_MARGIN_MS = 5_000;

/** Resolves when SIGINT or SIGTERM arrives. */
export function untilSignal(): Promise<string> {
  return new Promise((res) => {
    const on = (sig: string): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      res(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** The process events `logCrashes` listens to (a seam: tests pass an EventEmitter). */
export interface CrashSource {
  on(event: 'uncaughtException' | 'unhandledRejection', listener: (err: unknown) => void): unknown;
}

/**
 * An error nothing caught is logged as one JSON line (`fatal`, with the stack) before the process exits with
 * code 1, instead of Node's plain-text dump that log pipelines cannot parse. The orchestrator restarts it;
 * no queue state is lost (a job that was running is retried once its lock expires).
 */
export function logCrashes(
  log: { fatal(obj: object, msg: string): void },
  exit: (code: number) => void = (code) => process.exit(code),
  source: CrashSource = process,
): void {
  const crash = (kind: string) => (err: unknown) => {
    const e = err instanceof Error ? { message: err.message, stack: err.stack } : { message: String(err) };
    log.fatal({ kind, err: e }, 'crashed: an error nothing caught');
    exit(1);
  };
  source.on('uncaughtException', crash('uncaughtException'));
  source.on('unhandledRejection', crash('unhandledRejection'));
}

/**
 * Runs `stop`, giving up when `deadlineMs` passes (a close that waits for a Redis that is gone) or a second
 * signal arrives. Resolves to undefined when `stop` finished, else to why it was given up.
 */
export async function stopOrGiveUp(stop: () => Promise<void>, deadlineMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<string>((res) => {
    timer = setTimeout(() => res(`not stopped within ${deadlineMs} ms`), deadlineMs);
    timer.unref();
  });
  const forced = Promise.race([deadline, untilSignal().then((s) => `second signal ${s}`)]);
  const outcome = await Promise.race([stop().then(() => undefined), forced]);
  clearTimeout(timer);
  return outcome;
}

/**
 * Runs `stop` after the first signal. A second signal, or `deadlineMs` passing, ends the process with code 1
 * and a log line instead of leaving it hanging.
 */
export async function stopWithin(stop: () => Promise<void>, deadlineMs: number, log: Logger): Promise<number> {
  const outcome = await stopOrGiveUp(stop, deadlineMs);
  if (outcome === undefined) return 0;
  log.error({ reason: outcome }, 'shutdown did not finish; exiting');
  process.exit(1);
}
