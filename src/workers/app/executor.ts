/**
 * Performs a plan: each action in order, stopping at the first failure, then writes the status. Writes are
 * safe against races by construction: creates use deterministic names (AlreadyExists = someone did it, or
 * a pod that left the selector holds the name: `ownership/release.ts`),
 * deletes carry a UID precondition (NotFound = already gone), updates carry the resourceVersion read
 * (Conflict = re-read and plan again: thrown, and the queue retries at once). In-place steps are performed by
 * the in-place executor, one write each with the pod's resourceVersion as precondition. Pre-warm ImageList
 * writes come last and are best effort (`prewarm/apply.ts`): they never stop the reconcile.
 */
import type { App } from '../../api/app.ts';
import type { AppStatus } from '../../api/app-status.ts';
import type { Logger } from '../../common/log.ts';
import { isKubeError, KubeError } from '../../kube/errors.ts';
import type { ReconcileResult } from '../types.ts';
import type { Action, EventSpec } from './model/actions.ts';
import { failureEvent, successEvent } from './events.ts';
import { statusAfterCollision, statusAfterFailure } from './status/after-failure.ts';
import type { Plan } from './model/plan.ts';
import { equalRevisionData } from './revisions/revisions.ts';
import { canonicalJson } from '../../common/canonical-json.ts';
import type { AppClient } from './model/client.ts';
import type { Pod, Stored } from '../../kube/types.ts';
import { applyInPlaceStep, completesUpdate, markGateReady, needsGateReady, type FallbackLog } from '../inplace/index.ts';
import { mergeDiff } from './status/merge-diff.ts';
import { appControllerRef } from './model/owner-refs.ts';
import { controllerRef } from './pods/predicates.ts';
import { applyLifecycle } from './lifecycle/apply.ts';
import { afterPrewarm, isPrewarmAction, performPrewarm } from './prewarm/apply.ts';
import { BudgetHolder } from './prewarm/grant.ts';
import { UNLIMITED_BUDGET, type PullBudget } from './prewarm/budget.ts';
import { judgeNameTaken } from './ownership/release-apply.ts';
import { errorSummary, retryClassOf } from '../../common/errors.ts';
import { EXPANSION_RETRY_MS, EXPANSION_RETRY_WAIT } from './rollout/volume-growth.ts';
import { repeatsRefusal } from './status/after-failure.ts';
import type { Executed } from './summary.ts';
import { RolloutAnnotation } from '../../api/rollout-abort.ts';

interface ExecuteDeps {
  client: AppClient;
  log: Logger;
  now(): Date;
  /** The cluster's pre-warm pull budget; absent: no limit. */
  budget?: PullBudget | undefined;
}

interface Run {
  app: Stored<App>;
  ns: string;
  deps: ExecuteDeps;
}

const rvPatch = (resourceVersion: string | undefined, metadata: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) => ({
  metadata: { ...metadata, resourceVersion },
  ...rest,
});

/** Performs one pod action. */
async function performPodAction(run: Run, action: Extract<Action, { kind: PodActionKind }>): Promise<void> {
  const { client } = run.deps;
  switch (action.kind) {
    case 'adoptPod':
      await client.pods.patch(run.ns, action.name, rvPatch(action.resourceVersion, { ownerReferences: action.ownerReferences }));
      break;
    case 'fixPodIdentity':
      await client.pods.patch(run.ns, action.name, rvPatch(action.resourceVersion, { labels: action.labels }));
      break;
    case 'createPod':
      await markNewPodGate(run, await client.pods.create(run.ns, action.pod));
      break;
    case 'deletePod':
      if (action.fallback) logDecision(run, action.fallback.log);
      await client.pods.delete(run.ns, action.name, action.uid);
      break;
    case 'inPlaceStep':
      await applyInPlaceStep(client.podPatches, action.pod, action.step);
      break;
    case 'markGateReady':
      await markGateReady(client.podPatches, action.pod, run.deps.now());
      break;
    case 'podLifecycle':
      await applyLifecycle(client.podPatches, action);
      break;
  }
}

const POD_ACTIONS = ['adoptPod', 'fixPodIdentity', 'createPod', 'deletePod', 'inPlaceStep', 'markGateReady', 'podLifecycle'] as const;
type PodActionKind = (typeof POD_ACTIONS)[number];
const isPodAction = (a: Action): a is Extract<Action, { kind: PodActionKind }> => (POD_ACTIONS as readonly string[]).includes(a.kind);

/** Performs one action; returns the App as it is afterwards (changed only by pauseRollout and clearAnnotations). */
async function perform(run: Run, action: Action): Promise<Stored<App>> {
  const { client } = run.deps;
  const ns = run.ns;
  if (isPodAction(action)) {
    await performPodAction(run, action);
    return run.app;
  }
  switch (action.kind) {
    case 'createRevision':
      await client.revisions.create(ns, action.revision);
      break;
    case 'renumberRevision':
      await client.revisions.patch(ns, action.name, rvPatch(action.resourceVersion, {}, { revision: action.revision }));
      break;
    case 'adoptRevision':
      await client.revisions.patch(
        ns,
        action.name,
        rvPatch(action.resourceVersion, { ownerReferences: action.ownerReferences }, { revision: action.revision }),
      );
      break;
    case 'deleteRevision':
      await client.revisions.delete(ns, action.name, action.uid);
      break;
    case 'createPvc':
      await client.claims.create(ns, action.pvc);
      break;
    case 'setPvcOwners':
      await client.claims.patch(ns, action.name, rvPatch(action.resourceVersion, { ownerReferences: action.ownerReferences }));
      break;
    case 'expandPvc':
      await client.claims.patch(ns, action.name, rvPatch(action.resourceVersion, {}, { spec: { resources: { requests: { storage: action.storage } } } }));
      break;
    case 'pauseRollout': {
      const metadata = action.pausedBy === undefined ? {} : { annotations: { [RolloutAnnotation.pausedBy]: action.pausedBy } };
      return client.apps.patch(
        ns,
        run.app.metadata.name,
        rvPatch(action.resourceVersion, metadata, { spec: { updateStrategy: { rollingUpdate: { paused: action.paused ?? true } } } }),
      );
    }
    case 'clearAnnotations':
      return client.apps.patch(
        ns,
        run.app.metadata.name,
        rvPatch(run.app.metadata.resourceVersion, { annotations: Object.fromEntries(action.keys.map((k) => [k, null])) }),
      );
    case 'event':
      if (action.log) logDecision(run, action.log);
      await recordEvent(run, action.event);
      break;
  }
  return run.app;
}

/** A decision about a pod worth a log line of its own (an in-place update that fell back or was refused). */
function logDecision(run: Run, log: FallbackLog): void {
  run.deps.log[log.level](log.fields, log.msg);
}

const GATE_ATTEMPTS = 5;

/**
 * Sets readiness gate InPlaceUpdateReady True on a pod just created with it, so it does not stay NotReady. The
 * scheduler and kubelet write the new pod meanwhile: a 409 means re-read and try again. Best effort: the next
 * plan sets a gate still unset (`markGateReady` action).
 */
async function markNewPodGate(run: Run, created: Stored<Pod>): Promise<void> {
  const { client } = run.deps;
  let pod: Stored<Pod> | undefined = created;
  try {
    for (let attempt = 0; pod && needsGateReady(pod) && attempt < GATE_ATTEMPTS; attempt++) {
      try {
        await markGateReady(client.podPatches, pod, run.deps.now());
        return;
      } catch (err) {
        if (!isKubeError(err, 'Conflict')) throw err;
        pod = await client.pods.get(run.ns, created.metadata.name);
      }
    }
  } catch (err) {
    run.deps.log.warn({ pod: created.metadata.name, err: errorSummary(err) }, 'could not set the readiness gate of a new pod; the next reconcile will');
  }
}

/** Events are best effort: a lost Event must not fail or repeat the reconcile. */
async function recordEvent(run: Run, event: EventSpec): Promise<void> {
  try {
    await run.deps.client.events.record(run.app, event, run.deps.now());
  } catch (err) {
    run.deps.log.warn({ reason: event.reason, err: errorSummary(err) }, 'could not record event');
  }
}

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

/**
 * The pre-warm writes, last: they never stop the reconcile (a failure is reported and tried again later).
 * Then the status. `read` is the status as the plan read it.
 */
async function finish(run: Run, planned: Plan, read: AppStatus | undefined): Promise<{ wait: ReconcileResult['wait']; prewarmFailed: number }> {
  // A spec change made here (canary pause) is already reflected in the planned status.
  const generation = run.app.metadata.generation;
  const budget = new BudgetHolder(run.deps.budget ?? UNLIMITED_BUDGET, `${run.ns}/${run.app.metadata.name}`, run.deps.log);
  const plan = await budget.grant(planned, run.deps.now(), generation);
  const failures = await performPrewarm(run.deps.client.imageLists, plan.actions.filter(isPrewarmAction), run.deps.log);
  await budget.giveBack(failures);
  const { status, wait } = afterPrewarm(plan, read, failures, run.deps.now(), generation);
  await writeStatus(run, { ...status, observedGeneration: generation ?? status.observedGeneration });
  return { wait, prewarmFailed: failures.length };
}

/** What `execute` did: the wait to end with, and how far it got (the input of the job's summary). */
export interface Execution {
  wait?: ReconcileResult['wait'];
  executed: Executed;
}

export async function execute(plan: Plan, app: Stored<App>, deps: ExecuteDeps): Promise<Execution> {
  const run: Run = { app, ns: app.metadata.namespace, deps };
  let performed = 0;
  for (const action of plan.actions.filter((a) => !isPrewarmAction(a))) {
    try {
      run.app = await perform(run, action);
    } catch (caught) {
      // After a failed write the pods are not as planned: the failure status counts them as read.
      const asRead = plan.statusAsRead?.() ?? plan.status;
      const judged = await judgeNameTaken(action, caught, { pods: deps.client.pods, app: run.app, log: deps.log, record: (e) => recordEvent(run, e) });
      if ('done' in judged || (await recovered(run, action, judged.error, asRead))) {
        performed++;
        continue;
      }
      const { wait } = await onFailure(run, action, judged.error, asRead);
      return { ...(wait ? { wait } : {}), executed: { performed, stoppedAt: action.kind, prewarmFailed: 0, wait } };
    }
    performed++;
    const event = successEvent(run.app, action);
    if (event) await recordEvent(run, event);
    if (action.kind === 'deletePod' && action.fallback) await recordEvent(run, action.fallback.event);
    if (action.kind === 'inPlaceStep' && completesUpdate(action.step)) deps.log.info({ pod: action.name, revision: action.revision }, 'pod updated in place');
  }
  const { wait, prewarmFailed } = await finish(run, plan, app.status);
  return { ...(wait ? { wait } : {}), executed: { performed, prewarmFailed, wait } };
}
