/**
 * The App reconciler: the plan loop (`plan-loop.ts`: read → plan → read more → plan → dry run → plan → pull
 * budget → plan), then execute. Stateless; everything it needs is re-read from the apiserver (the claims and
 * the pre-warm ImageLists only when the plan needs them). An App that is gone only has its pre-warm entries
 * cleared (its pods and revisions go with the garbage collector).
 */
import type { ObjectKey } from '../../queue/names.ts';
import type { ReconcileContext, ReconcileResult, Reconciler } from '../types.ts';
import { AdmissionVerdicts } from './admission/dry-run.ts';
import { execute } from './executor.ts';
import { planLoop } from './plan-loop.ts';
import { clearDeletedApp } from './prewarm/apply.ts';
import { restAppClient } from './rest-client.ts';
import { summarizeApp, summaryLines } from './summary.ts';
import type { AppClient } from './model/client.ts';

/**
 * A reconciler over a given client factory (the apiserver by default; a fake in tests). The admission
 * verdicts it remembers live as long as the reconciler: one worker process.
 */
export function appReconciler(
  clientFor: (ctx: ReconcileContext) => AppClient = (ctx) => restAppClient(ctx.rest, ctx.signal),
  verdicts = new AdmissionVerdicts(),
): Reconciler {
  return async (key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> => {
    const client = clientFor(ctx);
    const read = await planLoop(client, key.namespace, key.name, () => ctx.now(), {
      verdicts,
      log: ctx.log,
      options: { prewarm: ctx.prewarmPolicy },
      budget: ctx.prewarmBudget,
    });
    if (!read) {
      await clearDeletedApp(client.imageLists, key.namespace, key.name, ctx.log, ctx.prewarmBudget);
      return { summary: { gone: true }, logs: ['the App is gone; the pre-warm entries it left, if any, are cleared'] };
    }
    const result = read.plan;
    ctx.log.debug(
      {
        actions: result.actions.map((a) => a.kind),
        wait: result.wait,
        claimsRead: read.observed.claims !== undefined,
        imageListsRead: read.observed.imageLists !== undefined,
      },
      'app plan',
    );
    const { wait, executed } = await execute(result, read.observed.app, { client, log: ctx.log, now: () => ctx.now(), budget: ctx.prewarmBudget });
    const summary = summarizeApp(result, read.observed.app.metadata.generation, executed, ctx.now(), read.observed.app.status?.analysis);
    return { ...(wait ? { wait } : {}), summary: { ...summary }, logs: summaryLines(result, summary, executed) };
  };
}

export const reconcileApp: Reconciler = appReconciler();
