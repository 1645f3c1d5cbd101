import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** One logger per process; JSON lines on stdout, fixed messages with data in fields. */
export function createLogger(component: string, level: string = 'info'): Logger {
  return pino({
    level,
    base: { component },
    redact: { paths: ['*.token', '*.password', '*.authorization', '*.headers'], censor: '[redacted]' },
  });
}

/**
 * A warn logger for errors that repeat while a dependency is down (a BullMQ worker's 'error' events fire on
 * every poll): the same message is logged at most once per `intervalMs`, with how many were held back.
 */
export function throttledWarn(log: Logger, msg: string, intervalMs = 30_000, now: () => number = Date.now): (err: Error) => void {
  let lastMessage = '';
  let lastAt = 0;
  let suppressed = 0;
  return (err: Error) => {
    const t = now();
    if (err.message === lastMessage && t - lastAt < intervalMs) {
      suppressed++;
      return;
    }
    log.warn({ err: err.message, ...(suppressed > 0 ? { suppressed } : {}) }, msg);
    lastMessage = err.message;
    lastAt = t;
    suppressed = 0;
  };
}
