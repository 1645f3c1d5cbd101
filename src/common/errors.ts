/**
 * What a message or a log line says about a thrown value. A log line never carries the error object itself:
 * a client's exception can hold the request it failed on, headers and credentials included.
 */

/** An Error's message; anything else thrown, as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The first line of `errorMessage` (parsers and client libraries append dumps on the lines after). */
export function errorFirstLine(err: unknown): string {
  return errorMessage(err).split('\n')[0] ?? '';
}

/** A log field for a failure: the error's code (when it is a string) and its message, nothing else. */
export function errorSummary(err: unknown): { code?: string; message: string } {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return { ...(typeof code === 'string' ? { code } : {}), message: errorMessage(err) };
}

/**
 * How a failure is retried: the one classification the queue's retry policy, the App executor and the node
 * daemon all read.
 * - `permanent`: a retry cannot fix it without a change of the request, the object or the cluster's policy.
 * - `heals`: time alone may lift it (quota, rate limits, a server error, no apiserver, a name held by a pod
 *   being deleted): retried with backoff.
 * - `reread`: the object changed meanwhile (a write conflict): re-read and try again at once.
 * - `transient`: nothing more is known; retried with backoff like `heals`.
 */
export type RetryClass = 'permanent' | 'heals' | 'reread' | 'transient';

/** An error that says how it is retried. Errors of other types are `transient`. */
export abstract class ClassifiedError extends Error {
  abstract readonly retryClass: RetryClass;
}

export function retryClassOf(err: unknown): RetryClass {
  return err instanceof ClassifiedError ? err.retryClass : 'transient';
}
