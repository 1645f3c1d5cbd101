/**
 * A worker logger that counts what the tests ask of a worker's logs: when each App's reconciles started, and
 * every failed reconcile with its error code (a reconcile that fails without a KubeError code threw a bug).
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface FailedReconcile {
  name: string;
  code: string | undefined;
  message: string;
}

export interface ReconcileLog {
  log: Logger;
  /** Start times (epoch ms) of the reconciles of each object, by name. */
  starts: Map<string, number[]>;
  failures: FailedReconcile[];
  /** Reconciles of `name` started in [from, to). */
  startsBetween(name: string, from: number, to?: number): number;
}

interface Line {
  msg?: string;
  name?: string;
  time?: number;
  err?: { code?: string; message?: string };
}

export function reconcileLog(): ReconcileLog {
  const starts = new Map<string, number[]>();
  const failures: FailedReconcile[] = [];
  const onLine = (line: Line): void => {
    if (!line.name) return;
    if (line.msg === 'reconcile started') {
      const list = starts.get(line.name) ?? [];
      list.push(line.time ?? Date.now());
      starts.set(line.name, list);
    } else if (line.msg === 'reconcile failed') {
      failures.push({ name: line.name, code: line.err?.code, message: line.err?.message ?? '' });
    }
  };
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString().split('\n')) {
        if (text.includes('"reconcile ')) onLine(JSON.parse(text) as Line);
      }
      done();
    },
  });
  const log = pino({ level: 'debug', base: { component: 'it-reliability' } }, sink);
  return {
    log,
    starts,
    failures,
    startsBetween: (name, from, to = Infinity) => (starts.get(name) ?? []).filter((t) => t >= from && t < to).length,
  };
}
