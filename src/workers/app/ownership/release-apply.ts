/** Performs the judgement of `release.ts` when a pod to create exists already. */
import type { App } from '../../../api/app.ts';
import type { Logger } from '../../../common/log.ts';
import { isKubeError, KubeError } from '../../../kube/errors.ts';
import type { Stored } from '../../../kube/types.ts';
import type { Action, EventSpec } from '../model/actions.ts';
import { nameHolder, PodNameTakenError } from './release.ts';
import type { PodStore } from '../model/client.ts';

interface NameTakenDeps {
  pods: PodStore;
  app: Stored<App>;
  log: Logger;
  /** Records an Event on the App (best effort). */
  record(event: EventSpec): Promise<void>;
}

/**
 * Pod `name` could not be created, it exists: undefined when it is the App's own (a racing reconcile made
 * it), else the error to report. A pod the App controls that left its selector is released first, with its
 * UID and resourceVersion as preconditions (a Conflict is thrown: the queue retries at once).
 */
export async function podNameTaken(deps: NameTakenDeps, name: string): Promise<Error | undefined> {
  const ns = deps.app.metadata.namespace;
  const holder = nameHolder(deps.app, await deps.pods.get(ns, name));
  switch (holder.kind) {
    case 'ours':
      return undefined;
    case 'gone':
      return new KubeError('Conflict', 409, `Pod ${name} was deleted while being created; creating it again`);
    case 'foreign':
      return new PodNameTakenError(name, false);
    case 'release':
      await deps.pods.patch(ns, name, holder.patch);
      deps.log.info({ pod: name }, 'released a pod that no longer matches the selector');
      await deps.record(holder.event);
      return new PodNameTakenError(name, true);
  }
}

/**
 * A failed write as the executor handles it: a pod create that found its name taken is judged first, and is
 * done when the App's own pod holds the name; any other failure is passed on as it is.
 */
export async function judgeNameTaken(action: Action, err: unknown, deps: NameTakenDeps): Promise<{ done: true } | { error: unknown }> {
  if (action.kind !== 'createPod' || !isKubeError(err, 'AlreadyExists')) return { error: err };
  const error = await podNameTaken(deps, action.pod.metadata.name);
  return error ? { error } : { done: true };
}
