import type { ObjectKind } from '../queue/names.ts';
import { reconcileApp } from './app/reconcile.ts';
import { imageListReconciler } from './imagelist/reconcile.ts';
import type { Reconciler } from './types.ts';

/** What the reconcilers take from the worker's configuration. */
export interface ReconcilerOptions {
  /** Where ImageList pull secrets are copied for the node daemons; undefined: not at all. */
  pullSecretNamespace?: string | undefined;
}

/** The reconcile function for each kind the worker handles. */
export function reconcilers(opts: ReconcilerOptions = {}): Record<ObjectKind, Reconciler> {
  return { App: reconcileApp, ImageList: imageListReconciler(opts.pullSecretNamespace) };
}
