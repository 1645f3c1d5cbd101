/**
 * Sends generated objects to the apiserver (strict field validation, as kubectl does) and checks each answer
 * against what the case expects: accepted, or refused with a message that names the field.
 */
import { isKubeError } from '../../../src/kube/errors.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import type { ResourceRef } from '../../../src/kube/paths.ts';
import type { Expectation } from './app-cases.ts';

export type Verdict = { accepted: true; object: unknown } | { accepted: false; status: number; message: string };

export async function submit(rest: KubeRest, ref: ResourceRef, body: unknown, dryRun: boolean): Promise<Verdict> {
  try {
    const object = await rest.create(ref, body, { fieldValidation: 'Strict', ...(dryRun ? { dryRun: 'All' } : {}) });
    return { accepted: true, object };
  } catch (err) {
    // Only the apiserver's refusals are verdicts; anything else (unreachable, 5xx) fails the run.
    if (isKubeError(err, 'Invalid', 'BadRequest')) return { accepted: false, status: err.status, message: err.detail };
    throw err;
  }
}

/** Any field path the way the apiserver prints them (`spec.x[0].y`, `.spec.x`, `unknown field "spec.x"`). */
export const FIELD_PATH = /\b(spec|metadata)(\.[A-Za-z][\w-]*(\[\d+\])?)+/;

/** Why a verdict contradicts the expectation; undefined when it agrees. */
export function verdictProblem(expect: Expectation, v: Verdict): string | undefined {
  if (expect.outcome === 'accepted') return v.accepted ? undefined : `refused (${v.status}): ${v.message}`;
  if (v.accepted) return expect.outcome === 'refused' ? `accepted, expected a refusal naming ${expect.field}` : undefined;
  if (!FIELD_PATH.test(v.message)) return `refused without a field path: ${v.message}`;
  if (expect.outcome === 'refused' && !v.message.includes(expect.field)) return `refused without naming ${expect.field}: ${v.message}`;
  return undefined;
}

/** Runs `fn` over `items` with at most `limit` at a time; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
