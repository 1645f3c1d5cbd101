/**
 * Problems of `reserveOrdinals`, `scaleStrategy` and the specified-delete label that admission may have missed
 * (Apps stored before the CRD checked them): each becomes part of the InvalidSpec condition and its Event.
 */
import type { App } from '../../../api/app.ts';
import { PodManagementPolicy } from '../../../api/app-spec.ts';
import { MAX_ORDINAL } from '../../../api/app-rules.ts';
import { maxUnavailableOf } from '../../../api/int-or-percent.ts';
import { parseReserveOrdinals, replicaOrdinals } from '../../../api/reserve-ordinals.ts';
import { SPECIFIED_DELETE_LABEL } from '../../../api/specified-delete.ts';
import type { Stored } from '../../../kube/types.ts';

export function advancedSpecProblems(app: Stored<App>, replicas: number): string[] {
  const spec = app.spec;
  const problems: string[] = [];
  const reserve = parseReserveOrdinals(spec.reserveOrdinals);
  if (!reserve.ok) problems.push(`spec.reserveOrdinals: ${reserve.reason}`);
  else if (reserve.ranges.length > 0) {
    const last = replicaOrdinals(spec.ordinals?.start ?? 0, replicas, reserve.ranges).at(-1) ?? 0;
    if (last > MAX_ORDINAL) problems.push(`spec.reserveOrdinals: the highest pod ordinal, ${last}, is above ${MAX_ORDINAL}`);
  }
  const scaleMax = spec.scaleStrategy?.maxUnavailable;
  if (scaleMax !== undefined) {
    const r = maxUnavailableOf(scaleMax, replicas);
    if (!r.ok) problems.push(`spec.scaleStrategy.maxUnavailable: ${r.reason}`);
    if ((spec.podManagementPolicy ?? PodManagementPolicy.orderedReady) !== PodManagementPolicy.parallel)
      problems.push('spec.scaleStrategy.maxUnavailable requires podManagementPolicy: Parallel');
  }
  if (spec.template.metadata?.labels?.[SPECIFIED_DELETE_LABEL] !== undefined)
    problems.push(`spec.template.metadata.labels: ${SPECIFIED_DELETE_LABEL} belongs on a live pod, never in the template`);
  return problems;
}
