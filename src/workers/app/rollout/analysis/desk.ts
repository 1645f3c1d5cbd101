/**
 * What a reconcile hands over when it does not take its due measurements itself: the request of one measurement
 * and the desk that collects it (a worker's measure queue, `workers/measure`). Types only, so the worker context
 * can name the desk without importing the analysis.
 */
import type { AnalysisCheck, Measurement } from '../../../../api/analysis.ts';
import type { App } from '../../../../api/app.ts';
import type { Stored } from '../../../../kube/types.ts';
import type { QueryVariables } from './prometheus.ts';

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
