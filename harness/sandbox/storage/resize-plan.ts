/**
 * Pure decisions of the sandbox's volume resizer (the provisioner's second job): which bound claims ask to
 * grow, and the claim status writes of a resize, modelled on the external resizer for a volume that needs no
 * node expansion. The apiserver admits a larger request only on a bound claim whose class allows expansion.
 */
import { parseQuantity } from '../../../src/common/quantity.ts';
import type { BindingMode, Claim } from './pv-plan.ts';

/**
 * The size a bound claim of one of our classes asks to grow to, when its request exceeds the capacity it
 * reports (the apiserver admitted the larger request, so the class allows expansion). Undefined otherwise.
 */
export function pendingResize(claim: Claim, classes: ReadonlyMap<string, BindingMode>): string | undefined {
  const cls = claim.spec.storageClassName;
  if (cls === undefined || !classes.has(cls) || !claim.spec.volumeName || claim.status?.phase !== 'Bound' || claim.metadata.deletionTimestamp) return undefined;
  const want = claim.spec.resources?.requests?.['storage'];
  const have = parseQuantity(claim.status.capacity?.['storage']);
  const wanted = parseQuantity(want);
  return want !== undefined && wanted !== undefined && have !== undefined && wanted > have ? want : undefined;
}

/**
 * The claim status writes of a resize that needs no node expansion, as the external resizer makes them: first
 * in progress (the size allocated, `ControllerResizeInProgress`, condition Resizing), then, once the volume
 * has grown, finished (the new capacity, no resize status or condition left).
 */
export function resizeStarted(size: string): Record<string, unknown> {
  return {
    status: {
      allocatedResources: { storage: size },
      allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      conditions: [{ type: 'Resizing', status: 'True', lastTransitionTime: new Date().toISOString() }],
    },
  };
}

export function resizeFinished(size: string): Record<string, unknown> {
  return { status: { capacity: { storage: size }, allocatedResources: { storage: size }, allocatedResourceStatuses: null, conditions: null } };
}
