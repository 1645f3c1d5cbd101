import { appRef } from '../../src/api/group.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { PatchType } from '../../src/kube/rest.ts';
import type { ReconcileContext, ReconcileResult } from '../../src/workers/types.ts';
import type { ObjectKey } from '../../src/queue/names.ts';
import type { App } from '../../src/api/app.ts';
import type { Stored } from '../../src/kube/types.ts';

/**
 * The smallest App reconcile: records that the current generation was seen (status.observedGeneration).
 * It proves the watch → queue → worker loop end to end; the full App reconcile replaces it.
 */
export async function observeGeneration(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
  let app: Stored<App>;
  try {
    app = await ctx.rest.get<Stored<App>>(appRef(key.namespace, key.name), ctx.signal);
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return {};
    throw err;
  }
  const generation = app.metadata.generation ?? 0;
  if (app.status?.observedGeneration === generation) return {};
  // Only ebb writes status.observedGeneration; the resourceVersion precondition keeps a stale read from
  // moving it backwards.
  const patch = { metadata: { resourceVersion: app.metadata.resourceVersion }, status: { observedGeneration: generation } };
  await ctx.rest.patch(appRef(key.namespace, key.name, 'status'), patch, PatchType.merge, { fieldManager: 'ebb' }, ctx.signal);
  ctx.log.info({ generation }, 'observed generation');
  return {};
}
