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
import { planRepull, REPULL_FIELD_MANAGER, type RepullEntry } from './repull-plan.ts';
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

/** The ImageList reconciler; with a pull-secret namespace, it also keeps the pull-secret copies there. */
export function imageListReconciler(pullSecretNamespace: string | undefined): (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult> {
  return async (key, ctx) => {
    const list = await readImageList(key, ctx);
    if (!list || list.metadata.deletionTimestamp) return {};
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
  return plan.waitMs === undefined ? {} : { wait: { reason: REPULL_WAIT_REASON, afterMs: plan.waitMs } };
}
