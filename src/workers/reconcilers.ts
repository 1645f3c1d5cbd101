import type { ObjectKind } from '../queue/names.ts';
import { observeGeneration } from './observed.ts';
import type { Reconciler } from './types.ts';

/** The reconcile function for each kind the worker handles. */
export function reconcilers(): Partial<Record<ObjectKind, Reconciler>> {
  return { App: observeGeneration };
}
