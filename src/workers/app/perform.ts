/**
 * One action of a plan, performed: the write it names, with the precondition it carries (a UID on deletes, the
 * resourceVersion read on patches). `executor.ts` runs them in order and judges what a failure means.
 */
import type { App } from '../../api/app.ts';
import type { Logger } from '../../common/log.ts';
import { isKubeError } from '../../kube/errors.ts';
import type { Action, EventSpec } from './model/actions.ts';
import type { AppClient } from './model/client.ts';
import type { Pod, Stored } from '../../kube/types.ts';
import { applyInPlaceStep, markGateReady, needsGateReady, type FallbackLog } from '../inplace/index.ts';
import { applyLifecycle } from './lifecycle/apply.ts';
import type { PullBudget } from '../shared/pull-budget.ts';
import { errorSummary } from '../../common/errors.ts';
import { RolloutAnnotation } from '../../api/rollout-abort.ts';

export interface ExecuteDeps {
  client: AppClient;
  log: Logger;
  now(): Date;
  /** The cluster's pre-warm pull budget the plan loop asked: shares of requests not written are given back to it. */
  budget?: PullBudget | undefined;
}

export interface Run {
  app: Stored<App>;
  ns: string;
  deps: ExecuteDeps;
}

export const rvPatch = (resourceVersion: string | undefined, metadata: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) => ({
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
export async function perform(run: Run, action: Action): Promise<Stored<App>> {
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
export function logDecision(run: Run, log: FallbackLog): void {
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
export async function recordEvent(run: Run, event: EventSpec): Promise<void> {
  try {
    await run.deps.client.events.record(run.app, event, run.deps.now());
  } catch (err) {
    run.deps.log.warn({ reason: event.reason, err: errorSummary(err) }, 'could not record event');
  }
}
