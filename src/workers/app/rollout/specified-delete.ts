/**
 * Pods labelled `apps.ebb.dev/specified-delete: "true"`: deleted so they are created again with the same
 * identity and the revision their ordinal should run (the partition decides, as for any new pod), below the
 * partition too. Part of the rolling update: RollingUpdate only, not while paused or while an OrderedReady
 * App is blocked, and within its maxUnavailable budget — a labelled pod that is unavailable already is
 * deleted without spending any, an available one spends one (highest ordinal first). Every delete carries its
 * replacement, so it is dry-run like any recreation.
 */
import { isSpecifiedDelete } from '../../../api/specified-delete.ts';
import { isFailed, isSucceeded, isTerminating, isUnavailable } from '../pods/predicates.ts';
import type { Accumulator } from '../pods/pod-set.ts';
import type { UpdateContext } from './inplace-plan.ts';
import { deletePod } from '../pods/delete-pod.ts';
import { replacementFor } from './replacement.ts';
import { maxUnavailable, unavailableReplicas } from './unavailable.ts';

/** What the specified deletes took: the ordinals deleted (the rolling update skips them) and the budget spent. */
export interface SpecifiedDeletes {
  ordinals: ReadonlySet<number>;
  spent: number;
}

const NO_SPECIFIED_DELETES: SpecifiedDeletes = { ordinals: new Set(), spent: 0 };

function whyNot(ctx: UpdateContext, paused: boolean, blocked: boolean): string | undefined {
  if (!ctx.rolling) return 'updateStrategy is OnDelete';
  if (paused) return 'the rollout is paused';
  if (blocked) return 'an earlier pod is not ready yet (OrderedReady)';
  return undefined;
}

/** Labelled live replicas, highest ordinal first (failed pods are replaced anyway; terminating ones are going). */
function labelled(ctx: UpdateContext): number[] {
  const out: number[] = [];
  for (const ordinal of [...ctx.set.ordinals].reverse()) {
    const pod = ctx.set.replicas.get(ordinal);
    if (pod && isSpecifiedDelete(pod.metadata.labels) && !isTerminating(pod) && !isFailed(pod) && !isSucceeded(pod)) out.push(ordinal);
  }
  return out;
}

/**
 * Plans the deletes the budget allows and records the labelled pods left waiting (`acc.deferred`). A pod whose
 * in-place update is under way is unavailable already: it is deleted, and its in-place step is dropped.
 */
export function planSpecifiedDeletes(ctx: UpdateContext, acc: Accumulator, paused: boolean, blocked: boolean): SpecifiedDeletes {
  const targets = labelled(ctx);
  if (targets.length === 0) return NO_SPECIFIED_DELETES;
  const { set } = ctx;
  const name = (ordinal: number): string => set.replicas.get(ordinal)?.metadata.name ?? String(ordinal);
  const why = whyNot(ctx, paused, blocked);
  if (why) {
    acc.deferred = { ...acc.deferred, specifiedDelete: { pods: targets.map(name), why } };
    return NO_SPECIFIED_DELETES;
  }
  const limit = maxUnavailable(set);
  let budget = limit - unavailableReplicas(set);
  let spent = 0;
  const deleted = new Set<number>();
  const waiting: string[] = [];
  for (const ordinal of targets) {
    const pod = set.replicas.get(ordinal);
    if (!pod) continue;
    const free = isUnavailable(pod, set.minReadySeconds, set.now);
    if (!free && budget <= 0) {
      waiting.push(pod.metadata.name);
      continue;
    }
    if (!free) {
      budget--;
      spent++;
    }
    deleted.add(ordinal);
    acc.actions.push(deletePod(pod, ordinal, 'specified', replacementFor(set, ordinal)));
  }
  const names = new Set([...deleted].map(name));
  acc.actions = acc.actions.filter((a) => !((a.kind === 'inPlaceStep' || a.kind === 'markGateReady') && names.has(a.name)));
  if (waiting.length > 0) acc.deferred = { ...acc.deferred, specifiedDelete: { pods: waiting, why: `maxUnavailable ${limit} reached` } };
  return { ordinals: deleted, spent };
}
