/**
 * Performs a plan: each action in order (`perform.ts`), stopping at the first failure, then writes the status. Writes are
 * safe against races by construction: creates use deterministic names (AlreadyExists = someone did it, or
 * a pod that left the selector holds the name: `ownership/release.ts`),
 * deletes carry a UID precondition (NotFound = already gone), updates carry the resourceVersion read
 * (Conflict = re-read and plan again: thrown, and the queue retries at once). In-place steps are performed by
 * the in-place executor, one write each with the pod's resourceVersion as precondition. Pre-warm ImageList
 * writes come last and are best effort (`prewarm/apply.ts`): they never stop the reconcile.
 */
import type { App } from '../../api/app.ts';
import type { AppStatus } from '../../api/app-status.ts';
import { isKubeError, KubeError } from '../../kube/errors.ts';
import type { ReconcileResult } from '../types.ts';
import type { Action } from './model/actions.ts';
import { failureEvent, successEvent } from './events/app-events.ts';
import { repeatsRefusal, statusAfterCollision, statusAfterFailure } from './status/after-failure.ts';
import type { Plan } from './model/plan.ts';
import { equalRevisionData } from './revisions/revisions.ts';
import { canonicalJson } from '../../common/canonical-json.ts';
import type { Stored } from '../../kube/types.ts';
import { completesUpdate } from '../inplace/index.ts';
import { mergeDiff } from './status/merge-diff.ts';
import { asReadOf } from './status/assemble.ts';
import { appControllerRef } from './model/owner-refs.ts';
import { controllerRef } from './pods/predicates.ts';
import { afterPrewarm, isPrewarmAction, performPrewarm } from './prewarm/apply.ts';
import { giveBack } from './prewarm/grant.ts';
import { judgeNameTaken } from './ownership/release-apply.ts';
import { errorSummary, retryClassOf } from '../../common/errors.ts';
import { EXPANSION_RETRY_MS, EXPANSION_RETRY_WAIT } from './rollout/volume-growth.ts';
import type { Executed } from './summary.ts';
import { perform, recordEvent, rvPatch, type ExecuteDeps, type Run } from './perform.ts';

/** Outcomes that mean the write is already in effect (a pod's name taken is judged by `podNameTaken`). */
function alreadyDone(action: Action, err: unknown): boolean {
  if (isKubeError(err, 'AlreadyExists')) return action.kind === 'createPvc';
  // A pod gone meanwhile needs no in-place step or gate any more (the next plan recreates it).
  if (isKubeError(err, 'NotFound')) return ['deletePod', 'deleteRevision', 'inPlaceStep', 'markGateReady', 'podLifecycle', 'expandPvc'].includes(action.kind);
  return false;
}

/**
 * A revision name is taken. Ours with the same data: fine (a racing worker made it). An orphan with the same
 * data: adopt it. Anything else: a hash collision, so the collision count goes up and the plan is redone.
 */
async function revisionTaken(run: Run, action: Extract<Action, { kind: 'createRevision' }>): Promise<'done' | 'collision'> {
  const existing = await run.deps.client.revisions.get(run.ns, action.revision.metadata.name);
  if (!existing || !equalRevisionData(existing.data, action.revision.data)) return 'collision';
  const owner = controllerRef(existing.metadata);
  if (owner?.uid === run.app.metadata.uid) return 'done';
  if (owner) return 'collision';
  const ownerReferences = [...(existing.metadata.ownerReferences ?? []), appControllerRef(run.app)];
  await run.deps.client.revisions.patch(run.ns, existing.metadata.name, rvPatch(existing.metadata.resourceVersion, { ownerReferences }));
  return 'done';
}

async function writeStatus(run: Run, status: AppStatus): Promise<void> {
  const before = run.app.status ?? {};
  if (canonicalJson(before) === canonicalJson(status)) return;
  const patch = rvPatch(run.app.metadata.resourceVersion, {}, { status: mergeDiff(before, status) });
  run.app = await run.deps.client.apps.patchStatus(run.ns, run.app.metadata.name, patch);
}

/** Best-effort status write on the failure path: the original error is what matters. */
async function writeStatusQuietly(run: Run, status: AppStatus): Promise<void> {
  try {
    await writeStatus(run, status);
  } catch (err) {
    run.deps.log.warn({ err: errorSummary(err) }, 'could not record the failure in status');
  }
}

/**
 * Failures that are not failures: the write is already in effect, or a revision name is taken by our own
 * data. A real hash collision raises the collision count and throws Conflict (the queue retries at once).
 */
async function recovered(run: Run, action: Action, err: unknown, status: AppStatus): Promise<boolean> {
  if (alreadyDone(action, err)) return true;
  if (action.kind !== 'createRevision' || !isKubeError(err, 'AlreadyExists')) return false;
  if ((await revisionTaken(run, action)) === 'done') return true;
  // Only the count changes: the rest of the planned status names the revision that could not be created.
  await writeStatus(run, statusAfterCollision({ ...(run.app.status ?? {}), collisionCount: status.collisionCount ?? 0 }));
  throw new KubeError('Conflict', 409, `revision name ${action.revision.metadata.name} collides with a different revision; collision count raised`);
}

/** Handles a failed action: Event, failure condition, then a result to end with or a throw for the queue to retry. */
async function onFailure(run: Run, action: Action, err: unknown, status: AppStatus): Promise<ReconcileResult> {
  if (isKubeError(err, 'Conflict')) throw err;
  const { code, message: detail } = errorSummary(err);
  const heals = retryClassOf(err) === 'heals';
  const event = failureEvent(run.app, action, detail);
  if (event && !repeatsRefusal(run.app, action, detail, heals)) await recordEvent(run, event);
  const failed = statusAfterFailure(status, { action, code, detail, heals, now: run.deps.now(), generation: run.app.metadata.generation });
  if (failed !== status) await writeStatusQuietly(run, failed);
  run.deps.log.warn({ action: action.kind, err: { code, detail } }, 'reconcile action failed');
  // A claim that may not grow is left alone; its pod waits and the expansion is tried again later.
  if (action.kind === 'expandPvc' && !heals) return { wait: { reason: EXPANSION_RETRY_WAIT, afterMs: EXPANSION_RETRY_MS } };
  // The apiserver rejects this spec's pods: reported as InvalidSpec; retrying cannot help until the spec changes.
  if ((action.kind === 'createPod' || action.kind === 'createPvc') && code === 'Invalid') return {};
  // Anything else goes to the queue's retry policy: what heals with time (quota, 429, 5xx) is retried with
  // the capped per-object backoff; a permanent refusal is kept as failed, visible in the condition above.
  throw err;
}

/** The holder of the App's shares of the pull budget. */
const holderOf = (run: Run): string => `${run.ns}/${run.app.metadata.name}`;

/** Shares granted to requests that are not written give their share back (the plan loop asked the budget). */
async function giveBackRequests(run: Run, nodes: readonly string[]): Promise<void> {
  if (run.deps.budget) await giveBack(run.deps.budget, holderOf(run), nodes, run.deps.log);
}

/** The pre-warm requests of `plan`, none of them written when an earlier action failed. */
const requestedNodes = (plan: Plan): string[] => plan.actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [a.node] : []));

/**
 * The pre-warm writes, last: they never stop the reconcile (a failure is reported and tried again later).
 * Then the status. `read` is the status as the plan read it.
 */
async function finish(run: Run, plan: Plan, read: AppStatus | undefined): Promise<{ wait: ReconcileResult['wait']; prewarmFailed: number }> {
  // A spec change made here (canary pause) is already reflected in the planned status.
  const generation = run.app.metadata.generation;
  const failures = await performPrewarm(run.deps.client.imageLists, plan.actions.filter(isPrewarmAction), run.deps.log);
  await giveBackRequests(
    run,
    failures.filter((f) => f.request).map((f) => f.node),
  );
  const { status, wait } = afterPrewarm(plan, read, failures, run.deps.now(), generation);
  await writeStatus(run, { ...status, observedGeneration: generation ?? status.observedGeneration });
  return { wait, prewarmFailed: failures.length };
}

/** What `execute` did: the wait to end with, and how far it got (the input of the job's summary). */
export interface Execution {
  wait?: ReconcileResult['wait'];
  executed: Executed;
}

/** The actions before the pre-warm writes, in order, up to the first failure; the failure's result, or undefined when all were made. */
async function performAll(run: Run, plan: Plan): Promise<{ performed: number; stopped?: { at: Action['kind']; wait: ReconcileResult['wait'] } }> {
  const { deps } = run;
  let performed = 0;
  for (const action of plan.actions.filter((a) => !isPrewarmAction(a))) {
    try {
      run.app = await perform(run, action);
    } catch (caught) {
      // After a failed write the pods are not as planned: the failure status counts them as read.
      const asRead = asReadOf(plan);
      const judged = await judgeNameTaken(action, caught, { pods: deps.client.pods, app: run.app, log: deps.log, record: (e) => recordEvent(run, e) });
      if ('done' in judged || (await recovered(run, action, judged.error, asRead))) {
        performed++;
        continue;
      }
      const { wait } = await onFailure(run, action, judged.error, asRead);
      return { performed, stopped: { at: action.kind, wait } };
    }
    performed++;
    const event = successEvent(run.app, action);
    if (event) await recordEvent(run, event);
    if (action.kind === 'deletePod' && action.fallback) await recordEvent(run, action.fallback.event);
    if (action.kind === 'inPlaceStep' && completesUpdate(action.step)) deps.log.info({ pod: action.name, revision: action.revision }, 'pod updated in place');
  }
  return { performed };
}

export async function execute(plan: Plan, app: Stored<App>, deps: ExecuteDeps): Promise<Execution> {
  const run: Run = { app, ns: app.metadata.namespace, deps };
  let done: Awaited<ReturnType<typeof performAll>>;
  try {
    done = await performAll(run, plan);
  } catch (err) {
    // The pre-warm requests come last: an earlier failure leaves every one of them unwritten.
    await giveBackRequests(run, requestedNodes(plan));
    throw err;
  }
  const { performed, stopped } = done;
  if (stopped) {
    await giveBackRequests(run, requestedNodes(plan));
    return { ...(stopped.wait ? { wait: stopped.wait } : {}), executed: { performed, stoppedAt: stopped.at, prewarmFailed: 0, wait: stopped.wait } };
  }
  const { wait, prewarmFailed } = await finish(run, plan, app.status);
  return { ...(wait ? { wait } : {}), executed: { performed, prewarmFailed, wait } };
}
