/**
 * Reading an answer's body under a byte cap: an answer whose Content-Length is over the cap is refused before a
 * byte of it is read, and one without (chunked) is abandoned as soon as the bytes read pass the cap. Either way
 * the connection is dropped and nothing of the answer stays in memory.
 */
import type { Readable } from 'node:stream';
import { tooLarge } from './errors.ts';

/**
 * What is left to read over several requests (the lists one reconcile reads): each answer is capped at the
 * smaller of its own cap and what remains, and what it took is subtracted.
 */
export interface ByteBudget {
  remaining: number;
}

export function byteBudget(bytes: number): ByteBudget {
  return { remaining: bytes };
}

/** The cap of one answer: its own, or the budget's rest when that is smaller (then a refusal says so). */
export function effectiveCap(maxBytes: number, budget: ByteBudget | undefined): { cap: number; byBudget: boolean } {
  if (budget && budget.remaining < maxBytes) return { cap: Math.max(0, budget.remaining), byBudget: true };
  return { cap: maxBytes, byBudget: false };
}

/** The body, whole, or a TooLarge KubeError (the body destroyed). `contentLength` is the header as sent. */
export async function readBounded(
  body: Readable,
  contentLength: string | null,
  limit: { cap: number; byBudget: boolean; budget?: ByteBudget | undefined },
  what: string,
): Promise<Buffer> {
  const declared = contentLength === null ? Number.NaN : Number(contentLength);
  if (Number.isFinite(declared) && declared > limit.cap) {
    body.destroy();
    throw tooLarge(what, limit.cap, limit.byBudget);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit.cap) {
      body.destroy();
      throw tooLarge(what, limit.cap, limit.byBudget);
    }
    chunks.push(chunk);
  }
  if (limit.budget) limit.budget.remaining -= total;
  return Buffer.concat(chunks, total);
}
