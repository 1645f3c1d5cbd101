/** metav1.Condition lists: set a condition keeping lastTransitionTime unless the status changes. */
import type { Condition } from '../../api/meta.ts';

export interface ConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** RFC 3339 with second precision, as the apiserver writes metav1.Time. */
export function rfc3339(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** A copy of `conditions` with `input` set (appended when new); lastTransitionTime moves only when status changes. */
export function setCondition(conditions: readonly Condition[] | undefined, input: ConditionInput, now: Date, generation: number | undefined): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const previous = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    ...input,
    lastTransitionTime: previous && previous.status === input.status ? previous.lastTransitionTime : rfc3339(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** True when the condition is True and was recorded for `generation`. */
export function isTrueFor(conditions: readonly Condition[] | undefined, type: string, generation: number | undefined): boolean {
  const c = findCondition(conditions, type);
  return c?.status === 'True' && c.observedGeneration === generation;
}
