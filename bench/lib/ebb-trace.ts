/**
 * Diagnostics for the in-process ebb worker (`--trace`): every apiserver request made by ebb's own KubeRest
 * clients (counted client-side, which cross-checks the apiserver-metrics subtraction), and every App
 * reconcile with its plan (from the worker's debug log) and the requests made while it ran. One App's
 * reconciles never overlap (one job per key), so a request belongs to the reconcile running at that time.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { KubeRest, type RequestOptions } from '../../src/kube/rest.ts';
import { add, clientRequestKey, type Counts } from './requests.ts';

export interface ReconcileTrace {
  jobId: string;
  enqueuedAt: number;
  startedAt: number;
  finishedAt?: number;
  actions: string[];
  requests: string[];
}

interface LogLine {
  msg?: string;
  jobId?: string;
  enqueuedAt?: number;
  startedAt?: number;
  finishedAt?: number;
  actions?: string[];
}

export type ReconcileClass = 'pod write' | 'status write only' | 'reads only';

export class EbbTrace {
  readonly reconciles = new Map<string, ReconcileTrace>();
  private readonly requests: { at: number; key: string }[] = [];

  /**
   * Counts requests of every KubeRest that has no own `request` (countRequests gives the kubelets' and the
   * benchmark's clients one), i.e. ebb's watcher and worker. Install before they start.
   */
  hookClients(): void {
    const original = KubeRest.prototype.request;
    const requests = this.requests;
    KubeRest.prototype.request = function <T>(this: KubeRest, method: string, path: string, opts: RequestOptions = {}): Promise<T> {
      const key = Object.hasOwn(this, 'request') ? undefined : clientRequestKey(method, path, opts);
      if (key) requests.push({ at: Date.now(), key });
      return original.call(this, method, path, opts) as Promise<T>;
    };
  }

  /** A debug-level logger for the worker whose reconcile lines feed the trace (other lines are dropped). */
  workerLogger(): Logger {
    const stream = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        for (const text of chunk.toString().split('\n'))
          if (text.includes('"msg":"reconcile') || text.includes('"msg":"app plan"')) this.take(JSON.parse(text) as LogLine);
        done();
      },
    });
    return pino({ level: 'debug', base: { component: 'bench-worker' } }, stream);
  }

  private take(line: LogLine): void {
    if (!line.jobId) return;
    if (line.msg === 'reconcile started' && line.startedAt !== undefined) {
      this.reconciles.set(line.jobId, {
        jobId: line.jobId,
        enqueuedAt: line.enqueuedAt ?? line.startedAt,
        startedAt: line.startedAt,
        actions: [],
        requests: [],
      });
    }
    const r = this.reconciles.get(line.jobId);
    if (!r) return;
    if (line.msg === 'app plan') r.actions = line.actions ?? [];
    if (line.msg === 'reconcile finished' && line.finishedAt !== undefined) r.finishedAt = line.finishedAt;
  }

  /** ebb's requests by key in [from, to] (epoch ms). */
  requestsIn(from: number, to: number): Counts {
    const out: Counts = new Map();
    for (const r of this.requests) if (r.at >= from && r.at <= to) add(out, r.key, 1);
    return out;
  }

  /** Reconciles that started in [from, to], each with the requests sent while it ran. */
  reconcilesIn(from: number, to: number): ReconcileTrace[] {
    const list = [...this.reconciles.values()].filter((r) => r.startedAt >= from && r.startedAt <= to).sort((a, b) => a.startedAt - b.startedAt);
    for (const r of list) {
      const end = r.finishedAt ?? to;
      r.requests = this.requests.filter((q) => q.at >= r.startedAt && q.at <= end).map((q) => q.key);
    }
    return list;
  }
}

export function classify(r: ReconcileTrace): ReconcileClass {
  if (r.requests.some((k) => k === 'POST pods' || k === 'DELETE pods')) return 'pod write';
  if (r.requests.some((k) => k.startsWith('PATCH apps.ebb.dev/apps/status'))) return 'status write only';
  return 'reads only';
}

/** Reconciles and their requests by class. */
export function summarizeTrace(list: ReconcileTrace[]): Map<ReconcileClass, { reconciles: number; requests: number; reads: number }> {
  const out = new Map<ReconcileClass, { reconciles: number; requests: number; reads: number }>();
  for (const r of list) {
    const c = classify(r);
    const s = out.get(c) ?? { reconciles: 0, requests: 0, reads: 0 };
    s.reconciles++;
    s.requests += r.requests.length;
    s.reads += r.requests.filter((k) => k.startsWith('GET ') || k.startsWith('LIST ')).length;
    out.set(c, s);
  }
  return out;
}
