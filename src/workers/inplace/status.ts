/**
 * What the App's status and rolling update need to know about in-place updates: which pods are being updated
 * (they count as unavailable, like a pod being recreated) and how far each has got.
 */
import { Reason } from '../../api/keys.ts';
import { updatePending } from './completion.ts';
import { gateCondition } from './gate.ts';
import { hasStateAnnotation, readState } from './state.ts';
import type { Pod } from '../../kube/types.ts';

/** An in-place update is in progress: the state annotation is present, or the gate says it started. */
export function podIsUpdatingInPlace(pod: Pod): boolean {
  if (hasStateAnnotation(pod)) return true;
  const gate = gateCondition(pod);
  return gate?.status === 'False' && gate.reason === Reason.startInPlaceUpdate;
}

export type InPlacePhase = 'Idle' | 'Starting' | 'Patching' | 'Waiting' | 'Finishing';

export interface InPlaceStatus {
  updating: boolean;
  phase: InPlacePhase;
  /** The revision being rolled out to this pod. */
  revision?: string;
  startedAt?: string;
  /** Batches whose images are patched, of how many. */
  batchesPatched?: number;
  batches?: number;
  /** The first container not done yet, and why (ContainerNotRestarted, ContainerNotReady, ResizeNotActuated, …). */
  waitingFor?: { container: string; reason: string };
}

/** A summary of the pod's in-place update for status, Events and logs. */
export function inPlaceStatus(pod: Pod): InPlaceStatus {
  const state = readState(pod);
  if (!state) return podIsUpdatingInPlace(pod) ? { updating: true, phase: 'Starting' } : { updating: false, phase: 'Idle' };
  const base = { updating: true, revision: state.revision, startedAt: state.startedAt, batchesPatched: state.batch + 1, batches: state.batches.length };
  if (state.batch < 0) return { ...base, phase: 'Starting' };
  if (state.batch < state.batches.length - 1) return { ...base, phase: 'Patching' };
  const pending = updatePending(pod, state);
  return pending ? { ...base, phase: 'Waiting', waitingFor: pending } : { ...base, phase: 'Finishing' };
}
