/**
 * How many Apps are in a state an operator is alerted on (a held rollout, an abort, a quarantine, a spec that
 * cannot be acted on, a missed progress deadline, failing pod creates), counted from the App objects the
 * watcher receives anyway. Only Apps in such a state take memory (one number each): the watcher keeps no
 * object cache. Exported as `ebb_apps_in_state{state}`, for alerts and dashboards.
 */
import type { Condition } from '../api/meta.ts';
import type { KubeObject } from '../kube/types.ts';

type Check = (conditions: readonly Condition[]) => boolean;
const isTrue =
  (type: string): Check =>
  (cs) =>
    cs.some((c) => c.type === type && c.status === 'True');

/** The states counted, each with its test on the App's conditions (types and reasons as the worker writes them). */
export const APP_STATES: Readonly<Record<string, Check>> = {
  rollout_held: isTrue('RolloutHeld'),
  aborted: isTrue('Aborted'),
  quarantined: isTrue('Quarantined'),
  invalid_spec: isTrue('InvalidSpec'),
  failed_create_pod: isTrue('FailedCreatePod'),
  progress_deadline_exceeded: (cs) => cs.some((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded'),
};
const NAMES = Object.keys(APP_STATES);

export class AppStates {
  private readonly flags = new Map<string, number>();

  /** Records the App's current states (from its status) under `key`. */
  seen(key: string, obj: KubeObject): void {
    const conditions = ((obj as { status?: { conditions?: Condition[] } }).status?.conditions ?? []) as readonly Condition[];
    let bits = 0;
    NAMES.forEach((name, i) => {
      if (APP_STATES[name]?.(conditions)) bits |= 1 << i;
    });
    if (bits === 0) this.flags.delete(key);
    else this.flags.set(key, bits);
  }

  gone(key: string): void {
    this.flags.delete(key);
  }

  /** Forgets every App of the keys `keep` does not hold (a relist: Apps deleted while the watch was down). */
  retain(keep: (key: string) => boolean): void {
    for (const key of this.flags.keys()) if (!keep(key)) this.flags.delete(key);
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(NAMES.map((n) => [n, 0]));
    for (const bits of this.flags.values()) {
      NAMES.forEach((name, i) => {
        if (bits & (1 << i)) out[name] = (out[name] ?? 0) + 1;
      });
    }
    return out;
  }
}
