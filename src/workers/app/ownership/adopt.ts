/**
 * Which pods belong to an App (upstream ControllerRefManager): pods it controls, plus orphans that match its
 * selector and carry one of its pod names, which it adopts. Pods controlled by anyone else are never touched.
 */
import type { App } from '../../../api/app.ts';
import type { Action } from '../model/actions.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { appControllerRef } from '../model/owner-refs.ts';
import { controllerRef, getOrdinal, isTerminating } from '../pods/predicates.ts';
import { selectorMatches } from '../pods/selector.ts';

interface AdoptedPods {
  /** Pods of the App (adopted ones included), in no particular order. */
  owned: Stored<Pod>[];
  /** Adoption patches for orphans. */
  actions: Action[];
}

export function adoptPods(app: Stored<App>, pods: readonly Stored<Pod>[]): AdoptedPods {
  const uid = app.metadata.uid;
  const name = app.metadata.name;
  const owned: Stored<Pod>[] = [];
  const actions: Action[] = [];
  for (const pod of pods) {
    const ref = controllerRef(pod.metadata);
    if (ref) {
      if (ref.uid === uid) owned.push(pod);
      continue;
    }
    // Adopt only live orphans that match and are named like our pods, and never while the App is being deleted.
    const adoptable =
      !app.metadata.deletionTimestamp &&
      !isTerminating(pod) &&
      getOrdinal(name, pod.metadata.name) >= 0 &&
      selectorMatches(app.spec.selector, pod.metadata.labels);
    if (!adoptable) continue;
    const ownerReferences = [...(pod.metadata.ownerReferences ?? []), appControllerRef(app)];
    actions.push({ kind: 'adoptPod', name: pod.metadata.name, resourceVersion: pod.metadata.resourceVersion, ownerReferences });
    owned.push({ ...pod, metadata: { ...pod.metadata, ownerReferences } });
  }
  return { owned, actions };
}
