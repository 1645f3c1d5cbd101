/**
 * A job's admission under its namespace's cap (`EBB_NAMESPACE_CONCURRENCY`, `src/queue/namespace-gate.ts`):
 * admitted, or back to the delayed set for a moment without spending an attempt.
 */
import { DelayedError } from 'bullmq';
import { errorSummary } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { sleep } from '../common/wait.ts';
import type { NamespaceGate } from '../queue/namespace-gate.ts';
import type { WorkerMetrics } from './metrics.ts';

/** A job over its namespace's cap is tried again after this long, up to twice it (jitter). */
export const NAMESPACE_CAP_DELAY_MS = 500;
/** A capped job asks again after this rest before it goes back to the delayed set. */
const CAPPED_REST_MS = 200;

/** What admission needs of a BullMQ job. */
export interface DelayableJob {
  id?: string | undefined;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** The namespace cap fails open: a Redis error never stops a reconcile. */
async function admitted(gate: NamespaceGate, namespace: string, member: string, log: Logger): Promise<boolean> {
  try {
    return await gate.acquire(namespace, member, Date.now());
  } catch (err) {
    log.debug({ err: errorSummary(err) }, 'namespace cap unavailable; reconciling');
    return true;
  }
}

/**
 * Over its namespace's cap, a job asks once more after a short rest, then goes back to the delayed set for a
 * moment (no attempt spent): this throws. The rest keeps a slot that keeps meeting capped jobs (one namespace's
 * long backlog) from moving them to the delayed set as fast as Redis answers.
 */
export async function admitOrDelay(
  gate: NamespaceGate,
  namespace: string,
  job: DelayableJob,
  token: string | undefined,
  o: { metrics: WorkerMetrics; log: Logger; signal: AbortSignal | undefined },
): Promise<void> {
  const member = job.id ?? '';
  if (await admitted(gate, namespace, member, o.log)) return;
  await sleep(CAPPED_REST_MS, o.signal).catch(() => undefined);
  if (await admitted(gate, namespace, member, o.log)) return;
  o.metrics.capped.inc();
  await job.moveToDelayed(Date.now() + gate.retryDelayMs(), token);
  throw new DelayedError();
}
