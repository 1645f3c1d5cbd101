/**
 * Performs pre-warm actions: one server-side apply per ImageList with the App's own field manager, never
 * forced. They are best effort: a failure is logged and reported in condition ImagesPrewarmed, the other
 * ImageLists are still written, and the reconcile comes back later to try again; the rollout never waits.
 */
import type { AppStatus } from '../../../api/app-status.ts';
import { API_VERSION, IMAGE_LIST_KIND } from '../../../api/group.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import { prewarmLabelKey } from '../../../api/prewarm-keys.ts';
import type { Logger } from '../../../common/log.ts';
import { isKubeError } from '../../../kube/errors.ts';
import type { Wait } from '../../types.ts';
import type { Action } from '../model/actions.ts';
import { setCondition } from '../../shared/conditions.ts';
import { clearAll, prewarmIdentity } from './plan.ts';
import type { PrewarmAction } from '../model/prewarm-outcome.ts';
import type { ImageListStore } from '../model/client.ts';
import type { PullBudget } from '../../shared/pull-budget.ts';

/** After a failed ImageList write, the reconcile tries again this much later (not at once: it is not urgent). */
const PREWARM_RETRY: Wait = { reason: 'prewarm-retry', afterMs: 30_000 };

interface PrewarmFailure {
  node: string;
  /** The failed write was a request (not a removal). */
  request: boolean;
  code: string | undefined;
  detail: string;
}

/** ImageList writes that failed; thrown only where there is no status to report them in (a deleted App). */
class PrewarmError extends Error {
  override readonly name = 'PrewarmError';
  readonly failures: readonly PrewarmFailure[];

  constructor(failures: readonly PrewarmFailure[]) {
    super(`pre-warm ImageList writes failed: ${failures.map((f) => `${f.node}: ${f.detail}`).join('; ')}`);
    this.failures = failures;
  }
}

export const isPrewarmAction = (a: Action): a is PrewarmAction => a.kind === 'requestPrewarm' || a.kind === 'removePrewarm';

/** The apply body: the App's entries and label (request), or nothing but the uid precondition (removal). */
export function applyBody(action: PrewarmAction): Record<string, unknown> {
  const head = { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND };
  if (action.kind === 'removePrewarm') return { ...head, metadata: { name: action.node, ...(action.uid ? { uid: action.uid } : {}) } };
  return {
    ...head,
    metadata: {
      name: action.node,
      labels: { [action.label.key]: action.label.value },
      ...(action.requestedAt ? { annotations: { [action.label.key]: action.requestedAt } } : {}),
    },
    spec: { images: action.images.map((image) => ({ image, ...(action.pullSecret ? { pullSecret: action.pullSecret } : {}) })) },
  };
}

async function performOne(store: ImageListStore, action: PrewarmAction): Promise<void> {
  try {
    await store.apply(action.node, applyBody(action), action.fieldManager);
  } catch (err) {
    // A removal that meets no ImageList with that uid: the ImageList is gone, and the entries with it.
    if (action.kind === 'removePrewarm' && isKubeError(err, 'Conflict')) return;
    throw err;
  }
}

/** Performs every pre-warm action; returns the failures (each logged). */
export async function performPrewarm(store: ImageListStore, actions: readonly PrewarmAction[], log: Logger): Promise<PrewarmFailure[]> {
  const failures: PrewarmFailure[] = [];
  for (const action of actions) {
    try {
      await performOne(store, action);
    } catch (err) {
      const failure = {
        node: action.node,
        request: action.kind === 'requestPrewarm',
        code: isKubeError(err) ? err.code : undefined,
        detail: err instanceof Error ? err.message : String(err),
      };
      failures.push(failure);
      log.warn(
        { action: action.kind, node: action.node, err: { code: failure.code, detail: failure.detail } },
        'pre-warm ImageList write failed; will try again',
      );
    }
  }
  return failures;
}

/** The status to write and the wait to return once the pre-warm writes are done (or failed). */
export function afterPrewarm(
  plan: { status: AppStatus; wait?: Wait | undefined },
  asRead: AppStatus | undefined,
  failures: readonly PrewarmFailure[],
  now: Date,
  generation: number | undefined,
): { status: AppStatus; wait: Wait | undefined } {
  if (failures.length === 0) return { status: plan.status, wait: plan.wait };
  const wait = plan.wait && plan.wait.afterMs <= PREWARM_RETRY.afterMs ? plan.wait : PREWARM_RETRY;
  return { status: statusAfterPrewarmFailure(plan.status, asRead, failures, now, generation), wait };
}

/**
 * The status to write when pre-warm writes failed: the planned counters, but `status.prewarm` never dropped
 * (it is what tells a later reconcile that entries may be left to clear), and ImagesPrewarmed False.
 */
function statusAfterPrewarmFailure(
  planned: AppStatus,
  asRead: AppStatus | undefined,
  failures: readonly PrewarmFailure[],
  now: Date,
  generation: number | undefined,
): AppStatus {
  const prewarm = planned.prewarm ?? asRead?.prewarm ?? { nodesRequested: 0, nodesPulled: 0, nodesFailed: 0 };
  const first = failures[0];
  const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : '';
  const message = `writing ImageList ${first?.node ?? ''} failed${more}: ${first?.detail ?? ''}`;
  const conditions = setCondition(
    planned.conditions,
    { type: ConditionType.imagesPrewarmed, status: 'False', reason: Reason.prewarmRequestFailed, message },
    now,
    generation,
  );
  return { ...planned, prewarm, conditions };
}

/**
 * Clears the pre-warm entries of App `namespace/name`, which no longer exists: one LIST by its label (usually
 * empty), then one removal per ImageList found, its share of the pull budget given back. Throws PrewarmError when a removal failed, so the queue retries.
 */
export async function clearDeletedApp(store: ImageListStore, namespace: string, name: string, log: Logger, budget?: PullBudget): Promise<void> {
  const lists = await store.list(prewarmLabelKey(namespace, name));
  if (lists.length === 0) return;
  // Its pulls give back their share of the budget (best effort: a share not given back expires).
  await budget?.settle(`${namespace}/${name}`, { pulling: [], done: lists.map((l) => l.metadata.name), want: [] }).catch(() => undefined);
  const { actions } = clearAll({ id: prewarmIdentity(namespace, name), lists });
  const failures = await performPrewarm(store, actions, log);
  if (failures.length > 0) throw new PrewarmError(failures);
  log.info({ imageLists: lists.length }, 'cleared the pre-warm entries of a deleted App');
}
