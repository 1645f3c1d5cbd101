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
