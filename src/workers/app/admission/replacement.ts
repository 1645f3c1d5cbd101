/**
 * A pod is never deleted when its replacement would be refused (pure part). Every delete that recreates a pod
 * (an update by recreation, a failed pod replaced) carries its replacement (`rollout/replacement.ts`); the reconcile has the apiserver
 * dry-run one replacement per revision (`admission/dry-run.ts`), and a plan made knowing the refused revisions
 * leaves their deletes out and holds the rollout instead.
 */
import type { Action, Replacement } from '../model/actions.ts';
import type { Refusal, Refusals } from '../model/refusals.ts';

/** A rollout held because the replacements of `revision` would be refused. */
export interface Hold {
  revision: string;
  refusal: Refusal;
  /** Pods left running that the plan would otherwise have deleted. */
  pods: string[];
}

type Guarded = Extract<Action, { kind: 'deletePod' }> & { replacement: Replacement };

const isGuarded = (a: Action): a is Guarded => a.kind === 'deletePod' && a.replacement !== undefined;

/** The replacements to dry-run: one per revision (the first delete's), in plan order. */
export function replacementsToCheck(actions: readonly Action[]): Replacement[] {
  const byRevision = new Map<string, Replacement>();
  for (const a of actions) if (isGuarded(a) && !byRevision.has(a.replacement.revision)) byRevision.set(a.replacement.revision, a.replacement);
  return [...byRevision.values()];
}

/** Whether the plan deletes a pod to recreate it (so the dry run vouched for its replacement). */
export const recreatesPods = (actions: readonly Action[]): boolean => actions.some(isGuarded);

/**
 * The actions without the deletes whose replacement revision is refused (and without the Events of those
 * deletes' fallbacks), and the hold to report: the first refused revision, with the pods it keeps.
 */
export function holdRefused(actions: readonly Action[], refused: Refusals | undefined): { actions: Action[]; hold: Hold | undefined } {
  if (!refused || refused.size === 0) return { actions: [...actions], hold: undefined };
  let hold: Hold | undefined;
  const kept: Action[] = [];
  for (const a of actions) {
    const refusal = isGuarded(a) ? refused.get(a.replacement.revision) : undefined;
    if (!refusal || !isGuarded(a)) {
      kept.push(a);
      continue;
    }
    hold ??= { revision: a.replacement.revision, refusal, pods: [] };
    if (hold.revision === a.replacement.revision) hold.pods.push(a.name);
  }
  return { actions: kept, hold };
}
