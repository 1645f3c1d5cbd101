/**
 * The ImagePullJob reconcile (thin executor around `planPullJob`): read the job, the selected nodes and the
 * ImageLists holding its entries; write the requests and clears (each best effort: one failed ImageList write
 * does not stop the others, and the reconcile is retried), then the status and Events; delete the job once its
 * TTL has passed. A job that is gone (or being deleted) has its entries cleared: the watcher enqueues its
 * key on its DELETED event, and on every relist of ImageLists that still carry its field manager, so no
 * finalizer is needed.
 */
import { canonicalJson } from '../../common/canonical-json.ts';
import { ClassifiedError, errorSummary } from '../../common/errors.ts';
import { parsePullJobFieldManager, pullJobFieldManager, pullJobLabelKey } from '../../api/pull-job-keys.ts';
import type { ObjectKey } from '../../queue/names.ts';
import type { Reconciler, ReconcileContext, ReconcileResult } from '../types.ts';
import type { PullJobClient } from './client.ts';
import { planGone, planPullJob, type PullJobAction, type PullJobBudgetUse, type PullJobIdentity, type PullJobInput, type PullJobPlan } from './plan.ts';
import { IMAGE_PULL_JOB_HOLDER, UNLIMITED_BUDGET } from '../shared/pull-budget.ts';
import type { ImagePullJobStatus } from '../../api/image-pull-job.ts';

/** ImageList writes that failed: thrown after the status is written, so the queue retries with backoff. */
export class PullJobWriteError extends ClassifiedError {
  override readonly name = 'PullJobWriteError';
  readonly retryClass = 'transient';
}

/** Performs every action; returns how many failed (each logged). */
async function perform(client: PullJobClient, actions: readonly PullJobAction[], manager: string, ctx: ReconcileContext): Promise<number> {
  let failed = 0;
  for (const action of actions) {
    try {
      await client.apply(action, manager);
    } catch (err) {
      failed++;
      ctx.log.warn({ action: action.kind, node: action.node, err: errorSummary(err) }, 'ImagePullJob ImageList write failed');
    }
  }
  return failed;
}

const count = (actions: readonly PullJobAction[], kind: PullJobAction['kind']): number => actions.filter((a) => a.kind === kind).length;

/**
 * Settles the job's share of the pull budget; undefined when the plan has none to settle. A budget that cannot be
 * asked grants nothing new (pulls wait; the job is not failed for it).
 */
async function settle(ctx: ReconcileContext, holder: string, use: PullJobBudgetUse | undefined): Promise<PullJobInput['grant']> {
  if (!use || (use.want.length === 0 && use.pulling.length === 0 && use.done.length === 0 && use.kept.length === 0)) return undefined;
  const budget = ctx.prewarmBudget ?? UNLIMITED_BUDGET;
  try {
    const g = await budget.settle(holder, use);
    return { granted: new Set(g.granted), limitedBy: g.limitedBy };
  } catch (err) {
    ctx.log.warn({ err: errorSummary(err), requests: use.want.length }, 'pre-warm pull budget unavailable; the ImagePullJob waits');
    return { granted: new Set() };
  }
}

async function clearGone(client: PullJobClient, id: PullJobIdentity, ctx: ReconcileContext, holder: string): Promise<ReconcileResult> {
  const lists = await client.lists(id.labelKey);
  const actions = planGone(lists);
  // Its pulls and entries give their share back (best effort: a share not given back expires).
  await settle(ctx, holder, { pulling: [], done: lists.map((l) => l.metadata.name), kept: [], want: [], entriesPerNode: 0 });
  const failed = await perform(client, actions, id.fieldManager, ctx);
  if (failed > 0) throw new PullJobWriteError(`clearing the entries of a deleted ImagePullJob failed on ${failed} ImageList(s)`);
  return {
    summary: { gone: true, cleared: actions.length },
    logs: [actions.length > 0 ? `cleared ${actions.length} ImageList(s) of a deleted job` : 'the job is gone'],
  };
}

export function imagePullJobReconciler(clientOf: (ctx: ReconcileContext) => PullJobClient): Reconciler {
  return async (key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> => {
    const client = clientOf(ctx);
    const fieldManager = pullJobFieldManager(key.namespace, key.name);
    const id = { fieldManager, labelKey: pullJobLabelKey(key.namespace, key.name), watched: parsePullJobFieldManager(fieldManager) !== undefined };
    const holder = `${key.namespace}/${IMAGE_PULL_JOB_HOLDER}${key.name}`;
    const job = await client.get(key.namespace, key.name);
    if (!job || job.metadata.deletionTimestamp) return clearGone(client, id, ctx, holder);
    const [nodes, lists] = await Promise.all([client.nodes(job.spec.nodeSelector), client.lists(id.labelKey)]);
    const now = ctx.now();
    const first = planPullJob({ job, id, nodes, lists, now });
    // The nodes the pull budget grants (and the namespace's share and entries allow): planned again with only those.
    const grant = await settle(ctx, holder, first.budget);
    const plan = grant ? planPullJob({ job, id, nodes, lists, now, grant }) : first;
    const failed = await perform(client, plan.actions, id.fieldManager, ctx);
    if (plan.status && canonicalJson(plan.status) !== canonicalJson(job.status ?? {})) await client.writeStatus(job, plan.status);
    for (const e of plan.events) await client.record(job, e, now);
    if (failed > 0) throw new PullJobWriteError(`${failed} ImageList write(s) of the ImagePullJob failed`);
    if (plan.deleteJob) await client.deleteJob(job);
    return { ...said(plan, plan.status ?? job.status), ...(plan.wait ? { wait: plan.wait } : {}) };
  };
}

/** The job's summary and log line: what was written and the node counts. */
function said(plan: PullJobPlan, st: ImagePullJobStatus | undefined): Pick<ReconcileResult, 'summary' | 'logs'> {
  const summary = {
    actions: { request: count(plan.actions, 'request'), clear: count(plan.actions, 'clear'), ...(plan.deleteJob ? { deleteJob: 1 } : {}) },
    desired: st?.desired ?? 0,
    active: st?.active ?? 0,
    succeeded: st?.succeeded ?? 0,
    failed: st?.failed ?? 0,
  };
  return { summary, logs: [`nodes: ${summary.succeeded}/${summary.desired} pulled, ${summary.active} active, ${summary.failed} failed`] };
}
