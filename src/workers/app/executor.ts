/**
 * Performs a plan: each action in order, stopping at the first failure, then writes the status. Writes are
 * safe against races by construction: creates use deterministic names (AlreadyExists = someone did it),
 * deletes carry a UID precondition (NotFound = already gone), updates carry the resourceVersion read
 * (Conflict = re-read and plan again: thrown, and the queue retries at once).
 */
import type { App } from '../../api/app.ts';
import type { AppStatus } from '../../api/app-status.ts';
import type { Logger } from '../../common/log.ts';
import { isKubeError, KubeError } from '../../kube/errors.ts';
import type { ReconcileResult } from '../types.ts';
import type { Action, EventSpec } from './actions.ts';
import { failureEvent, successEvent } from './events.ts';
import { statusAfterCollision, statusAfterFailure } from './failure-status.ts';
import type { Plan } from './planner.ts';
import { equalRevisionData, canonicalJson } from './revisions.ts';
import type { AppClient } from './seams.ts';
import { mergeDiff } from './merge-diff.ts';
import { appControllerRef } from './owner.ts';
import { controllerRef } from './pod-predicates.ts';

export interface ExecuteDeps {
  client: AppClient;
  log: Logger;
  now(): Date;
}

interface Run {
  app: App;
  ns: string;
  deps: ExecuteDeps;
}

const rvPatch = (resourceVersion: string | undefined, metadata: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) => ({
  metadata: { ...metadata, resourceVersion },
  ...rest,
});

/** Performs one action; returns the App as it is afterwards (changed only by pauseRollout). */
async function perform(run: Run, action: Action): Promise<App> {
  const { client } = run.deps;
  const ns = run.ns;
  switch (action.kind) {
    case 'createRevision':
      await client.revisions.create(ns, action.revision);
      break;
    case 'renumberRevision':
      await client.revisions.patch(ns, action.name, rvPatch(action.resourceVersion, {}, { revision: action.revision }));
      break;
    case 'adoptRevision':
      await client.revisions.patch(ns, action.name, rvPatch(action.resourceVersion, { ownerReferences: action.ownerReferences }, { revision: action.revision }));
      break;
    case 'deleteRevision':
      await client.revisions.delete(ns, action.name, action.uid);
      break;
    case 'adoptPod':
      await client.pods.patch(ns, action.name, rvPatch(action.resourceVersion, { ownerReferences: action.ownerReferences }));
      break;
    case 'fixPodIdentity':
      await client.pods.patch(ns, action.name, rvPatch(action.resourceVersion, { labels: action.labels }));
      break;
    case 'createPvc':
      await client.claims.create(ns, action.pvc);
      break;
    case 'setPvcOwners':
      await client.claims.patch(ns, action.name, rvPatch(action.resourceVersion, { ownerReferences: action.ownerReferences }));
      break;
    case 'createPod':
      await client.pods.create(ns, action.pod);
      break;
    case 'deletePod':
      await client.pods.delete(ns, action.name, action.uid);
      break;
    case 'pauseRollout':
      return client.apps.patch(ns, run.app.metadata.name ?? '', rvPatch(action.resourceVersion, {}, { spec: { updateStrategy: { rollingUpdate: { paused: true } } } }));
    case 'event':
      await recordEvent(run, action.event);
      break;
  }
  return run.app;
}

/** Events are best effort: a lost Event must not fail or repeat the reconcile. */
async function recordEvent(run: Run, event: EventSpec): Promise<void> {
  try {
    await run.deps.client.events.record(run.app, event, run.deps.now());
  } catch (err) {
    run.deps.log.warn({ reason: event.reason, err: errorDetail(err) }, 'could not record event');
  }
}

/** Outcomes that mean the write is already in effect. */
function alreadyDone(action: Action, err: unknown): boolean {
  if (isKubeError(err, 'AlreadyExists')) return action.kind === 'createPod' || action.kind === 'createPvc';
  if (isKubeError(err, 'NotFound')) return action.kind === 'deletePod' || action.kind === 'deleteRevision';
  return false;
}

/**
 * A revision name is taken. Ours with the same data: fine (a racing worker made it). An orphan with the same
 * data: adopt it. Anything else: a hash collision, so the collision count goes up and the plan is redone.
 */
async function revisionTaken(run: Run, action: Extract<Action, { kind: 'createRevision' }>): Promise<'done' | 'collision'> {
  const existing = await run.deps.client.revisions.get(run.ns, action.revision.metadata.name ?? '');
  if (!existing || !equalRevisionData(existing.data, action.revision.data)) return 'collision';
  const owner = controllerRef(existing.metadata);
  if (owner?.uid === run.app.metadata.uid) return 'done';
  if (owner) return 'collision';
  const ownerReferences = [...(existing.metadata.ownerReferences ?? []), appControllerRef(run.app)];
  await run.deps.client.revisions.patch(run.ns, existing.metadata.name ?? '', rvPatch(existing.metadata.resourceVersion, { ownerReferences }));
  return 'done';
}

async function writeStatus(run: Run, status: AppStatus): Promise<void> {
  const before = run.app.status ?? {};
  if (canonicalJson(before) === canonicalJson(status)) return;
  const patch = rvPatch(run.app.metadata.resourceVersion, {}, { status: mergeDiff(before, status) });
  run.app = await run.deps.client.apps.patchStatus(run.ns, run.app.metadata.name ?? '', patch);
}

/** Best-effort status write on the failure path: the original error is what matters. */
async function writeStatusQuietly(run: Run, status: AppStatus): Promise<void> {
  try {
    await writeStatus(run, status);
  } catch (err) {
    run.deps.log.warn({ err: errorDetail(err) }, 'could not record the failure in status');
  }
}

function errorDetail(err: unknown): { code: string | undefined; detail: string } {
  if (isKubeError(err)) return { code: err.code, detail: err.message };
  return { code: undefined, detail: err instanceof Error ? err.message : String(err) };
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
  throw new KubeError('Conflict', 409, `revision name ${action.revision.metadata.name ?? ''} collides with a different revision; collision count raised`);
}

/** Handles a failed action: Event, failure condition, then a result to end with or a throw for the queue to retry. */
async function onFailure(run: Run, action: Action, err: unknown, status: AppStatus): Promise<ReconcileResult> {
  if (isKubeError(err, 'Conflict')) throw err;
  const { code, detail } = errorDetail(err);
  const event = failureEvent(run.app, action, detail);
  if (event) await recordEvent(run, event);
  const failed = statusAfterFailure(status, { action, code, detail, now: run.deps.now(), generation: run.app.metadata.generation });
  if (failed !== status) await writeStatusQuietly(run, failed);
  run.deps.log.warn({ action: action.kind, err: { code, detail } }, 'reconcile action failed');
  // The apiserver rejects this spec's pods: reported as InvalidSpec; retrying cannot help until the spec changes.
  if ((action.kind === 'createPod' || action.kind === 'createPvc') && code === 'Invalid') return {};
  throw err;
}

export async function execute(plan: Plan, app: App, deps: ExecuteDeps): Promise<ReconcileResult> {
  const run: Run = { app, ns: app.metadata.namespace ?? '', deps };
  for (const action of plan.actions) {
    try {
      run.app = await perform(run, action);
    } catch (err) {
      if (await recovered(run, action, err, plan.status)) continue;
      return onFailure(run, action, err, plan.status);
    }
    const event = successEvent(run.app, action);
    if (event) await recordEvent(run, event);
  }
  // A spec change made here (canary pause) is already reflected in the planned status.
  const generation = run.app.metadata.generation;
  await writeStatus(run, { ...plan.status, observedGeneration: generation ?? plan.status.observedGeneration });
  return plan.wait ? { wait: plan.wait } : {};
}
