/**
 * What the CRD schema and its CEL rules cannot guarantee (or may have missed), checked before acting. A
 * problem here becomes condition InvalidSpec and an Event; the reconcile then does nothing else.
 */
import type { App } from '../../api/app.ts';
import type { Stored } from '../../kube/types.ts';
import { parseDuration } from '../../api/duration.ts';
import { canaryReplicasOf, maxUnavailableOf } from '../../api/int-or-percent.ts';
import { selectorIsEmpty, selectorMatches } from './selector.ts';

function canaryProblems(app: Stored<App>, replicas: number): string[] {
  const problems: string[] = [];
  const steps = app.spec.updateStrategy?.rollingUpdate?.canary?.steps ?? [];
  steps.forEach((step, i) => {
    const at = `spec.updateStrategy.rollingUpdate.canary.steps[${i}]`;
    if ((step.replicas === undefined) === (step.pause === undefined)) problems.push(`${at}: set exactly one of replicas or pause`);
    if (step.replicas !== undefined) {
      const r = canaryReplicasOf(step.replicas, replicas);
      if (!r.ok) problems.push(`${at}.replicas: ${r.reason}`);
    }
    const duration = step.pause?.duration;
    if (duration !== undefined && parseDuration(duration) === undefined) problems.push(`${at}.pause.duration: "${duration}" is not a duration like 30s or 5m`);
  });
  return problems;
}

/** Human-readable problems of the spec; empty when the App can be reconciled. */
export function specProblems(app: Stored<App>): string[] {
  const spec = app.spec;
  const problems: string[] = [];
  if (selectorIsEmpty(spec.selector)) problems.push('spec.selector is empty: it must select the pods of this App');
  else if (!selectorMatches(spec.selector, spec.template.metadata?.labels)) {
    problems.push('spec.selector does not match spec.template.metadata.labels: the App would not select the pods it creates');
  }
  const replicas = spec.replicas ?? 1;
  const mu = maxUnavailableOf(spec.updateStrategy?.rollingUpdate?.maxUnavailable, replicas);
  if (!mu.ok) problems.push(`spec.updateStrategy.rollingUpdate.maxUnavailable: ${mu.reason}`);
  problems.push(...canaryProblems(app, replicas));
  return problems;
}
