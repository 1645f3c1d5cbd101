/** Pure: what `ebb rollout restart` writes, or why it writes nothing. */
import type { App } from '../../api/app.ts';
import { PodUpdatePolicy, UpdateStrategyType } from '../../api/update-strategy.ts';

/** The pod template annotation `rollout restart` stamps, the one kubectl uses for Deployments and StatefulSets. */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

export type RestartPlan = { kind: 'patch'; patch: unknown; notes: string[] } | { kind: 'refuse'; message: string };

/**
 * A merge patch stamping the template with the time (RFC 3339, seconds), which makes a new revision that the
 * rollout replaces every pod with. Refused when pods are updated in place: a template annotation is then
 * applied in place and restarts no container, so "restarted" would be untrue.
 */
export function planRestart(app: App, now: Date): RestartPlan {
  const name = app.metadata.name ?? '';
  const policy = app.spec.updateStrategy?.rollingUpdate?.podUpdatePolicy ?? PodUpdatePolicy.reCreate;
  if (policy !== PodUpdatePolicy.reCreate)
    return {
      kind: 'refuse',
      message:
        `app "${name}" updates pods in place (podUpdatePolicy ${policy}): a template annotation would be applied in place and restart no container. ` +
        'To restart every pod, set podUpdatePolicy to ReCreate, run rollout restart, then set it back.',
    };
  const at = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const notes: string[] = [];
  if (app.spec.updateStrategy?.rollingUpdate?.paused) notes.push('the rollout is paused: pods are replaced after `rollout resume`');
  if ((app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate) !== UpdateStrategyType.rollingUpdate)
    notes.push('with the OnDelete strategy a pod is replaced only when it is deleted');
  return { kind: 'patch', patch: { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } } }, notes };
}
