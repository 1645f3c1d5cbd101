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
