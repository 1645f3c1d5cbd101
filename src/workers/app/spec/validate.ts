/**
 * `spec/` owns what the planner checks of the spec before acting: this file, and the advanced fields (`advanced-
 * spec.ts`).
 *
 * What the CRD schema and its CEL rules cannot guarantee (or may have missed), checked before acting. A
 * problem here becomes condition InvalidSpec and an Event; the reconcile then does nothing else.
 */
import type { App } from '../../../api/app.ts';
import type { Stored } from '../../../kube/types.ts';
import { parseDuration } from '../../../common/duration.ts';
import { canaryReplicasOf, maxUnavailableOf } from '../../../api/int-or-percent.ts';
import { selectorIsEmpty, selectorMatches } from '../pods/selector.ts';
import { MAX_REPLICAS } from '../../../api/app-spec.ts';
import { MAX_ORDINAL } from '../../../api/app-rules.ts';
import { advancedSpecProblems } from './advanced-spec.ts';
import { writtenRolloutSettings } from '../model/rollout-settings.ts';
import { LABEL_KEY_CEL_PATTERN, LABEL_KEY_MAX_LENGTH } from '../../../api/schema-kit.ts';

const LABEL_KEY = new RegExp(LABEL_KEY_CEL_PATTERN);

/** Whether the apiserver accepts `key` as a label key (what the CRD's CEL rule checks since it has one). */
export function isLabelKey(key: string): boolean {
  return key.length <= LABEL_KEY_MAX_LENGTH && LABEL_KEY.test(key) && key.indexOf('/') <= 253;
}

/** Label keys the pods, claims or revisions would be refused for (Apps stored before the CRD checked them). */
function labelProblems(app: Stored<App>): string[] {
  const maps: [string, Record<string, string> | undefined][] = [
    ['spec.selector.matchLabels', app.spec.selector.matchLabels],
    ['spec.template.metadata.labels', app.spec.template.metadata?.labels],
    ...(app.spec.volumeClaimTemplates ?? []).map((t, i): [string, Record<string, string> | undefined] => [
      `spec.volumeClaimTemplates[${i}].metadata.labels`,
      t.metadata.labels,
    ]),
  ];
  return maps.flatMap(([at, labels]) =>
    Object.keys(labels ?? {})
      .filter((k) => !isLabelKey(k))
      .map((k) => `${at}: ${JSON.stringify(k)} is not a valid label key`),
  );
}

function canaryProblems(app: Stored<App>, replicas: number): string[] {
  const problems: string[] = [];
  const written = writtenRolloutSettings(app);
  const steps = written.canarySteps;
  steps.forEach((step, i) => {
    const at = `spec.updateStrategy.rollingUpdate.canary.steps[${i}]`;
    if ([step.replicas, step.pause, step.analysis].filter((x) => x !== undefined).length !== 1)
      problems.push(`${at}: set exactly one of replicas, pause or analysis`);
    if (step.replicas !== undefined) {
      const r = canaryReplicasOf(step.replicas, replicas);
      if (!r.ok) problems.push(`${at}.replicas: ${r.reason}`);
    }
    const defined = new Set(written.checks.map((c) => c.name));
    for (const name of step.analysis ?? []) if (!defined.has(name)) problems.push(`${at}.analysis: no check "${name}" in rollingUpdate.analysis.checks`);
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
  // Checked before anything walks the ordinal range (Apps stored before the CRD had this bound).
  if (replicas > MAX_REPLICAS) problems.push(`spec.replicas: ${replicas} is more than the ${MAX_REPLICAS} pods an App may have`);
  const start = spec.ordinals?.start ?? 0;
  if (start + replicas - 1 > MAX_ORDINAL) problems.push(`spec.ordinals.start: the highest pod ordinal, ${start + replicas - 1}, is above ${MAX_ORDINAL}`);
  problems.push(...labelProblems(app));
  const mu = maxUnavailableOf(writtenRolloutSettings(app).maxUnavailable, replicas);
  if (!mu.ok) problems.push(`spec.updateStrategy.rollingUpdate.maxUnavailable: ${mu.reason}`);
  problems.push(...canaryProblems(app, replicas));
  problems.push(...advancedSpecProblems(app, replicas));
  return problems;
}
