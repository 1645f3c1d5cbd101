import type { ViewStore } from '../view/store.ts';
import type { Logger } from '../common/log.ts';
import type { KubeRest } from '../kube/rest.ts';
import type { ObjectKey } from '../queue/names.ts';
import type { Notification } from './notify/notification.ts';
import type { CheckHttp } from './egress/outbound.ts';
import type { MeasureDesk } from './app/model/analysis-io.ts';
import type { PullBudget } from './shared/pull-budget.ts';
import type { PrewarmPolicy } from './app/model/prewarm-policy.ts';

/** "Not yet" is a value: come back after `afterMs` (a timer, not a sleeping worker). */
export interface Wait {
  reason: string;
  afterMs: number;
}

export interface ReconcileResult {
  wait?: Wait | undefined;
  /**
   * What the reconcile did, small and bounded (counts, names capped, messages cut): the job's return value,
   * which Bull Board shows. Never an apiserver's error text or a secret.
   */
  summary?: Readonly<Record<string, unknown>> | undefined;
  /** A few lines for the job's log (one per phase that acted), bounded like `summary`. */
  logs?: readonly string[] | undefined;
}

export interface ReconcileContext {
  rest: KubeRest;
  log: Logger;
  signal: AbortSignal;
  now(): Date;
  /** Queues a rollout notification for the webhook; undefined when no webhook is configured. */
  notify?: ((n: Notification) => Promise<void>) | undefined;
  /** The HTTP of web and Prometheus checks, under the worker's egress rules; undefined: those checks are inconclusive. */
  checks?: CheckHttp | undefined;
  /** Where due web and Prometheus measurements go (the measure queue); undefined: the reconcile takes them itself. */
  measure?: MeasureDesk | undefined;
  /** The cluster's pre-warm pull budget; absent: no limit. */
  prewarmBudget?: PullBudget | undefined;
  /** The limits of each App's pre-warming (worker settings); absent: the defaults. */
  prewarmPolicy?: PrewarmPolicy | undefined;
  /** The shared view of Apps and their pods (EBB_VIEW), and where its reads are counted; absent: every read is fresh. */
  view?: { store: ViewStore; onRead(from: 'view' | 'fresh', reason?: string): void } | undefined;
}

/** Reconciles one object; re-reads everything it needs from the apiserver. Throws on failure. */
export type Reconciler = (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult>;
