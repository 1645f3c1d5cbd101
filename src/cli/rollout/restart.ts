/** Pure: what `ebb rollout restart` writes, or why it writes nothing. */
import type { App } from '../../api/app.ts';
import { Annotation } from '../../api/keys.ts';
import { PodUpdatePolicy } from '../../api/update-strategy.ts';
import { rolloutSettings } from '../../workers/app/model/rollout-settings.ts';

/** The pod template annotation `rollout restart` stamps, the one kubectl uses for Deployments and StatefulSets. */
export const RESTARTED_AT_ANNOTATION = Annotation.restartedAt;

export type RestartPlan = { kind: 'patch'; patch: unknown; notes: string[] } | { kind: 'refuse'; message: string };

/**
 * A merge patch stamping the template with the time (RFC 3339, seconds), which makes a new revision that the
 * rollout replaces every pod with. A changed stamp is never applied in place (new containers need a new pod),
 * so under InPlaceIfPossible the pods are recreated, and under InPlaceOnly, which never recreates, it is refused.
 */
export function planRestart(app: App, now: Date): RestartPlan {
  const name = app.metadata.name ?? '';
  const settings = rolloutSettings(app);
  const policy = settings.podUpdatePolicy ?? PodUpdatePolicy.reCreate;
  if (policy === PodUpdatePolicy.inPlaceOnly)
    return {
      kind: 'refuse',
      message:
        `app "${name}" has podUpdatePolicy InPlaceOnly, which never recreates a pod, and a restart needs new pods. ` +
        'To restart every pod, set podUpdatePolicy to InPlaceIfPossible or ReCreate, run rollout restart, then set it back.',
    };
  const at = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const notes: string[] = [];
  if (policy === PodUpdatePolicy.inPlaceIfPossible) notes.push('pods are recreated: a restart is never done in place');
  if (settings.paused) notes.push('the rollout is paused: pods are replaced after `rollout resume`');
  if (!settings.rolling) notes.push('with the OnDelete strategy a pod is replaced only when it is deleted');
  return { kind: 'patch', patch: { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } } }, notes };
}
