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
