import type { Logger } from '../common/log.ts';
import type { KubeRest } from '../kube/rest.ts';
import type { ObjectKey } from '../queue/names.ts';

/** "Not yet" is a value: come back after `afterMs` (a timer, not a sleeping worker). */
export interface Wait {
  reason: string;
  afterMs: number;
}

export interface ReconcileResult {
  wait?: Wait | undefined;
}

export interface ReconcileContext {
  rest: KubeRest;
  log: Logger;
  signal: AbortSignal;
  now(): Date;
}

/** Reconciles one object; re-reads everything it needs from the apiserver. Throws on failure. */
export type Reconciler = (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult>;
