/**
 * What a viewer limited to some namespaces may see of Bull Board (pure): which namespace a job belongs to, what
 * a request to the board's API asks for, and an answer with other namespaces' jobs taken out.
 *
 * A job belongs to a namespace only when ebb made it for a namespaced object: a reconcile job whose id and
 * payload name the same App or ImagePullJob (`ownJobKey`). Timers, ImageList jobs (keyed by node), notifications
 * and any job of another form belong to none: only cluster-wide viewers see them.
 */
import { keyFromDedupId, InvalidKeyError } from '../queue/names.ts';
import { ownJobKey } from '../queue/job-id.ts';

/** A job as the board's API answers it (or BullMQ holds it): its id and its payload. */
export interface BoardJob {
  id?: unknown;
  data?: unknown;
}

/** The namespace of a job ebb made for an App or an ImagePullJob; undefined for every other job. */
export function jobNamespace(job: BoardJob): string | undefined {
  const key = ownJobKey(typeof job.id === 'string' ? job.id : undefined, job.data);
  return key && key.kind !== 'ImageList' ? key.namespace : undefined;
}

const SUFFIX = /^(.+)\.[0-9a-f]{12}$/;

/** The namespace a reconcile job id names (before its payload is read); undefined for any other id. */
export function idNamespace(id: string): string | undefined {
  const head = SUFFIX.exec(id)?.[1];
  if (!head) return undefined;
  try {
    const key = keyFromDedupId(head);
    return key.kind === 'ImageList' ? undefined : key.namespace;
  } catch (err) {
    if (err instanceof InvalidKeyError) return undefined;
    throw err;
  }
}

/**
 * A request to the board, as a limited viewer's gateway judges it:
 * - `page`: the page and its assets (no job data);
 * - `queues`: the queue list with the active queue's jobs (filtered);
 * - `job`: one job (`read`: its detail, `logs`, `change`: retry, remove, promote or edit it);
 * - `harmless`: a read of a queue's numbers or settings, no job data;
 * - `queueWide`: anything else (actions on a whole queue, schedulers, flows, unknown or odd paths): cluster-wide only.
 */
export type BoardRoute =
  | { kind: 'page' }
  | { kind: 'queues' }
  | { kind: 'job'; queue: string; jobId: string; action: 'read' | 'logs' | 'change' }
  | { kind: 'harmless' }
  | { kind: 'queueWide' };

const SAFE = new Set(['GET', 'HEAD']);
/** Reads of one queue that carry no job data. */
const QUEUE_READS = new Set(['metrics', 'default-job-options', 'workers', 'rate-limit', 'job-data-schema']);
/** Second segments that name a queue-wide action or listing, never a job (Bull Board routes them first). */
const QUEUE_WORDS = new Set([...QUEUE_READS, 'add', 'retry', 'promote', 'clean', 'pause', 'resume', 'concurrency', 'empty', 'obliterate', 'job-schedulers']);
const JOB_CHANGES = new Set(['retry', 'clean', 'promote', 'update-data', 'delay', 'priority', 'remove-unprocessed-children']);

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

const QUEUE_WIDE: BoardRoute = { kind: 'queueWide' };

/** Plain segments only: an empty, dot or encoded-slash segment might be routed otherwise than judged here. */
const plain = (parts: readonly (string | undefined)[]): parts is string[] =>
  parts.every((p) => p !== undefined && p !== '' && p !== '.' && p !== '..' && !p.includes('/'));

/** The route of a request below `api/queues/<queue>/<second>[/<third>]`. */
function queueRoute(safe: boolean, queue: string, second: string, third: string | undefined): BoardRoute {
  if (QUEUE_WORDS.has(second)) return safe && third === undefined && QUEUE_READS.has(second) ? { kind: 'harmless' } : QUEUE_WIDE;
  if (third === undefined) return safe ? { kind: 'job', queue, jobId: second, action: 'read' } : QUEUE_WIDE;
  if (third === 'logs') return safe ? { kind: 'job', queue, jobId: second, action: 'logs' } : QUEUE_WIDE;
  return JOB_CHANGES.has(third) && !safe ? { kind: 'job', queue, jobId: second, action: 'change' } : QUEUE_WIDE;
}

/** The route of `method` on `path` (below the board's base path, query string removed). */
export function classifyRoute(method: string, path: string): BoardRoute {
  // Judged on decoded segments, as the router matches them.
  const parts = path.replace(/\/+$/, '').split('/').slice(1).map(decoded);
  if (!plain(parts)) return QUEUE_WIDE;
  if (parts[0]?.toLowerCase() !== 'api') return { kind: 'page' };
  if (parts[0] !== 'api') return QUEUE_WIDE;
  const [, area, queue, second, third, ...rest] = parts;
  const safe = SAFE.has(method.toUpperCase());
  if (area === 'redis' && queue === 'stats' && second === undefined) return safe ? { kind: 'harmless' } : QUEUE_WIDE;
  if (area !== 'queues') return QUEUE_WIDE;
  if (queue === undefined) return safe ? { kind: 'queues' } : QUEUE_WIDE;
  if (second === undefined || rest.length > 0) return QUEUE_WIDE;
  return queueRoute(safe, queue, second, third);
}

interface QueuesAnswer {
  queues?: { jobs?: BoardJob[] }[];
}

/** The namespaces of the jobs in a queue-list answer. */
export function answerNamespaces(body: unknown): Set<string> {
  const out = new Set<string>();
  for (const q of (body as QueuesAnswer | undefined)?.queues ?? []) {
    for (const job of q.jobs ?? []) {
      const ns = jobNamespace(job);
      if (ns !== undefined) out.add(ns);
    }
  }
  return out;
}

/**
 * A queue-list answer with only the jobs of `allowed` namespaces. Counts and pages are the queue's own (numbers,
 * no names): a page may show fewer jobs than it holds.
 */
export function filterQueuesAnswer(body: unknown, allowed: ReadonlySet<string>): unknown {
  const answer = body as QueuesAnswer | undefined;
  if (!answer || !Array.isArray(answer.queues)) return { queues: [] };
  return {
    ...answer,
    queues: answer.queues.map((q) => ({
      ...q,
      jobs: (q.jobs ?? []).filter((job) => {
        const ns = jobNamespace(job);
        return ns !== undefined && allowed.has(ns);
      }),
    })),
  };
}

/** Whether a job-detail answer (`{ job, status }`) is a job of an `allowed` namespace. */
export function jobAnswerAllowed(body: unknown, allowed: ReadonlySet<string>): boolean {
  const job = (body as { job?: BoardJob } | undefined)?.job;
  const ns = job ? jobNamespace(job) : undefined;
  return ns !== undefined && allowed.has(ns);
}
