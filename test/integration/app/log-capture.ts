/**
 * A logger for the in-process watcher and worker that keeps every line (parsed) as well as printing
 * warnings and errors, so a test can count what the processes reported: reconcile failures and their
 * reasons, retries given up, Redis outages.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface LogLine {
  level: number;
  time: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  log: Logger;
  lines: LogLine[];
  /** Lines with message `msg` logged at or after `since` (ms since the epoch). */
  count(msg: string, since?: number, pred?: (l: LogLine) => boolean): number;
}

const WARN = 40;

/** Captures at `level` (default debug, so reconcile starts and ends are counted); prints warn and above. */
export function captureLog(component: string, level = 'debug', print = false): CapturedLog {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (!text) continue;
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        if (print && line.level >= WARN) process.stdout.write(`${text}\n`);
      }
      done();
    },
  });
  const log = pino({ level, base: { component } }, sink);
  return {
    log,
    lines,
    count: (msg, since = 0, pred = () => true) => lines.filter((l) => l.msg === msg && l.time >= since && pred(l)).length,
  };
}
