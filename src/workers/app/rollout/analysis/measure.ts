/**
 * The I/O half of the analysis: takes the measurements a plan found due (web and Prometheus checks), all at once, each
 * bounded by its own timeout. The planner then plans again with them (`Observed.measurements`); a check
 * whose measuring failed records an error measurement, never an error of the reconcile.
 */
import { MeasurementPhase, type Measurement } from '../../../../api/analysis.ts';
import type { App } from '../../../../api/app.ts';
import type { Stored } from '../../../../kube/types.ts';
import type { AnalysisIO } from '../../client.ts';
import type { MeasureRequest } from './book.ts';
import { measureWeb } from './web.ts';
import { measurePrometheus } from './prometheus.ts';

export async function takeMeasurements(
  io: AnalysisIO | undefined,
  app: Stored<App>,
  requests: readonly MeasureRequest[],
  now: () => Date,
): Promise<Map<string, Measurement>> {
  const taken = await Promise.all(
    requests.map(async (r): Promise<[string, Measurement]> => {
      const { web, prometheus } = r.check;
      if (io && prometheus) return [r.key, await measurePrometheus({ ...prometheus, onNoData: r.check.onNoData }, app.metadata.namespace, r.vars, io, now)];
      if (!web || !io) return [r.key, { phase: MeasurementPhase.error, message: 'this worker cannot take this measurement', measuredAt: now().toISOString() }];
      return [r.key, await measureWeb(web, app.metadata.namespace, io, now, r.check.onNoData)];
    }),
  );
  return new Map(taken);
}
