/**
 * The I/O half of the analysis: the measurements a plan found due (web and Prometheus checks). The planner then
 * plans again with those that are finished (`Observed.measurements`); a check whose measuring failed records
 * an error measurement, never an error of the reconcile.
 *
 * With a measure desk (a worker's measure queue, `workers/measure`), a reconcile never measures: it reads the
 * finished results and asks for the others, which stay pending (the plan waits; the measure pool wakes the App
 * when one is done). Without one (no queue: tests, a worker run with `EBB_MEASURE_CONCURRENCY=0`), the
 * measurements are taken here, all at once, each bounded by its own timeout.
 */
import { MeasurementPhase, type Measurement } from '../../../../api/analysis.ts';
import type { App } from '../../../../api/app.ts';
import type { Stored } from '../../../../kube/types.ts';
import type { AnalysisIO, MeasureDesk, MeasureRequest } from '../../model/analysis-io.ts';
import { measureWeb } from './web.ts';
import { measurePrometheus } from './prometheus.ts';

/** Takes one measurement now. */
export async function measureOne(
  io: AnalysisIO | undefined,
  namespace: string,
  r: Pick<MeasureRequest, 'check' | 'vars'>,
  now: () => Date,
): Promise<Measurement> {
  const { web, prometheus } = r.check;
  if (io && prometheus) return measurePrometheus({ ...prometheus, onNoData: r.check.onNoData }, namespace, r.vars, io, now);
  if (!web || !io) return { phase: MeasurementPhase.error, message: 'this worker cannot take this measurement', measuredAt: now().toISOString() };
  return measureWeb(web, namespace, io, now, r.check.onNoData);
}

export async function takeMeasurements(
  io: AnalysisIO | undefined,
  app: Stored<App>,
  requests: readonly MeasureRequest[],
  now: () => Date,
  desk?: MeasureDesk,
): Promise<Map<string, Measurement>> {
  if (desk) return desk.collect(app, requests);
  const taken = await Promise.all(requests.map(async (r): Promise<[string, Measurement]> => [r.key, await measureOne(io, app.metadata.namespace, r, now)]));
  return new Map(taken);
}
