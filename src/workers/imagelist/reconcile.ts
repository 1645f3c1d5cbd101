/**
 * The ImageList reconciler: the periodic re-pull of `alwaysPull` entries. It re-reads the ImageList, applies
 * the re-pull manager's entries when one falls due (or one must be released), and returns a timer for the
 * next due entry; with pull secrets enabled, it keeps the entries' pull-secret copies (`pull-secrets.ts`). The timer lives in the always-on watcher's timers queue, so it fires at zero workers.
 */
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../api/group.ts';
import type { ImageList } from '../../api/image-list.ts';
import { isKubeError } from '../../kube/errors.ts';
import type { ObjectKey } from '../../queue/names.ts';
import type { ReconcileContext, ReconcileResult } from '../types.ts';
import type { ManagedFieldsEntry } from '../../kube/types.ts';
import { imagesOwnedBy } from './managed-fields.ts';
import { planRepull, REPULL_FIELD_MANAGER, type RepullEntry, type RepullPlan } from './repull-plan.ts';
import { syncPullSecretCopies } from './pull-secrets.ts';

export const REPULL_WAIT_REASON = 'repull';

async function readImageList(key: ObjectKey, ctx: ReconcileContext): Promise<ImageList | undefined> {
  try {
    return await ctx.rest.get<ImageList>(imageListRef(key.name), ctx.signal);
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

function applyBody(name: string, entries: RepullEntry[]): unknown {
  return { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name }, spec: { images: entries } };
}

/** Most images a job's summary and log line name (the counts are exact). */
const MAX_IMAGES = 5;

/** The job's summary and log line: the re-pulls requested (images capped at `MAX_IMAGES`) and the next due time. */
export function repullSummary(plan: Pick<RepullPlan, 'apply' | 'requested' | 'waitMs'>, now: Date): Pick<ReconcileResult, 'summary' | 'logs'> {
  const images = plan.requested.slice(0, MAX_IMAGES);
  const until = plan.waitMs === undefined ? undefined : new Date(now.getTime() + plan.waitMs).toISOString();
  const more = plan.requested.length > MAX_IMAGES ? ` and ${plan.requested.length - MAX_IMAGES} more` : '';
  const logs = [
    ...(plan.requested.length > 0 ? [`re-pull requested: ${plan.requested.length} (${images.join(', ')}${more})`] : []),
    ...(plan.apply && plan.requested.length === 0 ? ['re-pull entries released'] : []),
    ...(until ? [`wait: ${REPULL_WAIT_REASON} until ${until}`] : []),
  ];
  return {
    summary: {
      actions: plan.apply ? { applyRepull: 1 } : {},
      repullRequested: plan.requested.length,
      ...(images.length > 0 ? { images } : {}),
      ...(until && plan.waitMs !== undefined ? { wait: { reason: REPULL_WAIT_REASON, afterMs: plan.waitMs, until } } : {}),
    },
    logs: logs.length > 0 ? logs : ['no writes'],
  };
}

/** The ImageList reconciler; with a pull-secret namespace, it also keeps the pull-secret copies there. */
export function imageListReconciler(pullSecretNamespace: string | undefined): (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult> {
  return async (key, ctx) => {
    const list = await readImageList(key, ctx);
    if (!list || list.metadata.deletionTimestamp) return { summary: { gone: true }, logs: ['the ImageList is gone or being deleted'] };
    if (pullSecretNamespace !== undefined) await syncPullSecretCopies(key.name, list, pullSecretNamespace, ctx);
    return repull(key, list, ctx);
  };
}

async function repull(key: ObjectKey, list: ImageList, ctx: ReconcileContext): Promise<ReconcileResult> {
  const managedFields = (list.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields;
  const plan = planRepull({
    entries: list.spec?.images ?? [],
    status: list.status?.images ?? [],
    owned: imagesOwnedBy(managedFields, REPULL_FIELD_MANAGER),
    now: ctx.now(),
  });
  if (plan.apply) {
    // Forced: a pull request is ebb's to make once due, even if a person set pullRequestedAt by hand before.
    await ctx.rest.apply(imageListRef(key.name), applyBody(key.name, plan.apply), REPULL_FIELD_MANAGER, true, ctx.signal);
    if (plan.requested.length > 0) ctx.log.info({ images: plan.requested }, 'periodic re-pull requested');
  }
  const said = repullSummary(plan, ctx.now());
  return plan.waitMs === undefined ? said : { wait: { reason: REPULL_WAIT_REASON, afterMs: plan.waitMs }, ...said };
}
