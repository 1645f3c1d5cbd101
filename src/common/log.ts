import { pino, type Logger } from 'pino';
import { prettyDestination, type LogFormat } from './log-format.ts';

export type { Logger } from 'pino';

/** The levels a process may log at (`EBB_LOG_LEVEL`); `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * One logger per process; fixed messages with data in fields, on stdout as JSON lines (`json`, the default),
 * or as readable lines for a terminal (`pretty`, `log-format.ts`). Redaction applies to both.
 */
export function createLogger(component: string, level: string = 'info', format: LogFormat = 'json'): Logger {
  const options = {
    level,
    base: { component },
    redact: { paths: ['*.token', '*.password', '*.authorization', '*.headers'], censor: '[redacted]' },
  };
  return format === 'pretty' ? pino(options, prettyDestination()) : pino(options);
}

/** How often one repeating error message is logged (a dependency that is down fails every poll). */
export const REPEAT_LOG_INTERVAL_MS = 30_000;

/**
 * Decides whether an error message is logged: the same message at most once per `intervalMs`, with the
 * count of those held back since. `reset()` forgets the last message (after a recovery).
 */
export function repeatGate(intervalMs = REPEAT_LOG_INTERVAL_MS, now: () => number = Date.now): { pass(message: string): number | undefined; reset(): void } {
  let lastMessage = '';
  let lastAt = 0;
  let suppressed = 0;
  return {
    pass(message) {
      const t = now();
      if (message === lastMessage && t - lastAt < intervalMs) {
        suppressed++;
        return undefined;
      }
      const held = suppressed;
      lastMessage = message;
      lastAt = t;
      suppressed = 0;
      return held;
    },
    reset() {
      lastMessage = '';
      suppressed = 0;
    },
  };
}

/** A warn logger for a BullMQ worker's 'error' events (they fire on every poll while Redis is down). */
export function throttledWarn(log: Logger, msg: string, intervalMs = REPEAT_LOG_INTERVAL_MS, now: () => number = Date.now): (err: Error) => void {
  const gate = repeatGate(intervalMs, now);
  return (err: Error) => {
    const held = gate.pass(err.message);
    if (held !== undefined) log.warn({ err: err.message, ...(held > 0 ? { suppressed: held } : {}) }, msg);
  };
}
