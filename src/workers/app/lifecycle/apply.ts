/**
 * Performs a lifecycle write (`podLifecycle`): one pods/status strategic merge patch carrying the pod's
 * resourceVersion, which sets the state label and its since annotation, adds the armed handlers (labels, and
 * finalizers, which merge into the pod's list) and sets the lifecycle-ready condition (merged by type).
 */
import { Annotation, FieldManager, LIFECYCLE_STATE_LABEL } from '../../../api/keys.ts';
import { core } from '../../../kube/paths.ts';
import { PatchType } from '../../../kube/rest.ts';
import type { PatchClient } from '../../inplace/index.ts';
import type { LifecycleAction } from './hooks.ts';

function lifecyclePatch(action: LifecycleAction): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    resourceVersion: action.pod.metadata.resourceVersion,
    labels: { ...action.labels, [LIFECYCLE_STATE_LABEL]: action.state },
    annotations: { [Annotation.lifecycleSince]: action.since },
  };
  if (action.finalizers && action.finalizers.length > 0) metadata.finalizers = action.finalizers;
  return { metadata, ...(action.condition ? { status: { conditions: [action.condition] } } : {}) };
}

export async function applyLifecycle(client: PatchClient, action: LifecycleAction): Promise<void> {
  const pod = action.pod.metadata;
  await client.patch(core('pods', pod.namespace, pod.name, 'status'), lifecyclePatch(action), PatchType.strategic, { fieldManager: FieldManager.ebb });
}
