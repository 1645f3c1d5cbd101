/**
 * A measurement that found no data: a Prometheus query answering an empty vector or NaN (a canary whose series
 * are not scraped yet, or a ratio over zero requests), a web answer with nothing at the condition's path. What
 * it counts as is the check's `onNoData`: an error by default (tolerated up to `consecutiveErrorLimit` in a
 * row, as Argo Rollouts treats an empty result), or inconclusive, successful or failed.
 */
import { DEFAULT_ON_NO_DATA, type AnalysisCheck, type Measurement } from '../../../../api/analysis.ts';

export function noDataMeasurement(onNoData: AnalysisCheck['onNoData'], message: string, now: Date): Measurement {
  return { phase: onNoData ?? DEFAULT_ON_NO_DATA, value: 'no data', message: `no data: ${message}`.slice(0, 1024), measuredAt: now.toISOString() };
}

/** A measurement that could not be taken. */
export const errorMeasurement = (message: string, now: Date): Measurement => ({
  phase: 'Error',
  message: message.slice(0, 1024),
  measuredAt: now.toISOString(),
});
