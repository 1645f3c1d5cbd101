/**
 * What the analysis of a rollout reads from outside the plan, as the App client carries it: the Secrets and the
 * HTTP of web and Prometheus checks, the check templates, and the desk a reconcile hands its due measurements to
 * (a worker's measure queue, `workers/measure`) when it does not take them itself. Types only.
 */
import type { AnalysisCheck, Measurement, QUERY_VARIABLES } from '../../../api/analysis.ts';
import type { App } from '../../../api/app.ts';
import type { CheckTemplate } from '../../../api/check-template.ts';
import type { Stored } from '../../../kube/types.ts';
import type { CheckHttp } from '../../egress/outbound.ts';

/** Reads one key of a Secret in a namespace; undefined when the Secret or key is absent. Throws when refused. */
export type SecretValue = (namespace: string, name: string, key: string) => Promise<string | undefined>;

/** What web and Prometheus checks measure through. */
export interface AnalysisIO {
  secretValue: SecretValue;
  http: CheckHttp;
  signal: AbortSignal;
}

/** Check templates, read only: a CheckTemplate in `namespace`, or a ClusterCheckTemplate when it is undefined. */
export interface CheckTemplateStore {
  get(namespace: string | undefined, name: string): Promise<CheckTemplate | undefined>;
}

/** A check as the planner judges it: concrete, or `unresolved` with the reason. */
export type ResolvedCheck = AnalysisCheck & { unresolved?: string | undefined };

/** What a Prometheus query's variables stand for, by name. */
export type QueryVariables = Record<(typeof QUERY_VARIABLES)[number], string>;

/** A measurement of a check that needs I/O (web), due in this plan: the plan loop takes it and plans again. */
export interface MeasureRequest {
  key: string;
  check: AnalysisCheck;
  /** What a Prometheus query's variables stand for. */
  vars: QueryVariables;
  /**
   * When the measurement was due, as recorded: the run's `nextMeasurementAt`, or its `startedAt` before its first
   * measurement. Undefined for a run not recorded yet (its first measurement is asked for once it is).
   */
  due?: string | undefined;
}

/** Where a reconcile hands its due measurements over instead of taking them. */
export interface MeasureDesk {
  /**
   * The finished measurements of `requests`, by key, read in one round trip; each one not finished is asked for
   * (once: asking again for one that waits or runs adds nothing). A request without a due time (`MeasureRequest.due`)
   * is neither read nor asked for: its run is recorded first.
   */
  collect(app: Stored<App>, requests: readonly MeasureRequest[]): Promise<Map<string, Measurement>>;
}
