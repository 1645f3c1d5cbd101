/** The App reconciler: read → plan → execute. Stateless; everything it needs is re-read from the apiserver. */
import type { ObjectKey } from '../../queue/names.ts';
import type { ReconcileContext, ReconcileResult, Reconciler } from '../types.ts';
import { execute } from './executor.ts';
import { readObserved } from './observe.ts';
import { plan } from './planner.ts';
import { restAppClient } from './rest-client.ts';
import type { AppClient } from './seams.ts';

/** A reconciler over a given client factory (the apiserver by default; a fake in tests). */
export function appReconciler(clientFor: (ctx: ReconcileContext) => AppClient = (ctx) => restAppClient(ctx.rest, ctx.signal)): Reconciler {
  return async (key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> => {
    const client = clientFor(ctx);
    const observed = await readObserved(client, key.namespace, key.name);
    if (!observed) return {};
    const now = ctx.now();
    const result = plan(observed, now);
    ctx.log.debug({ actions: result.actions.map((a) => a.kind), wait: result.wait }, 'app plan');
    return execute(result, observed.app, { client, log: ctx.log, now: () => ctx.now() });
  };
}

export const reconcileApp: Reconciler = appReconciler();
