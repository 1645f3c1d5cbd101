import type { ObjectKind } from '../queue/names.ts';
import { reconcileApp } from './app/reconcile.ts';
import { reconcileImageList } from './imagelist/reconcile.ts';
import type { Reconciler } from './types.ts';

/** The reconcile function for each kind the worker handles. */
export function reconcilers(): Record<ObjectKind, Reconciler> {
  return { App: reconcileApp, ImageList: reconcileImageList };
}
