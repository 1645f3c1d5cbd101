/**
 * Pure: what `ebb rollout pause | resume` write, or why they write nothing. The pause becomes a person's: ebb's
 * note that it paused the rollout itself (which an abort lifts) is removed in the same write, guarded by the
 * App's resourceVersion, so pausing a rollout ebb paused already holds it through an abort.
 */
import type { App } from '../api/app.ts';
import { GROUP } from '../api/group.ts';
import { RolloutAnnotation } from '../api/rollout-abort.ts';
import { rolloutSettings } from '../workers/app/model/rollout-settings.ts';
import type { ControlPlan } from './control.ts';

export function planPause(app: App, paused: boolean): ControlPlan {
  const name = `app.${GROUP}/${app.metadata.name ?? ''}`;
  const ebbs = app.metadata.annotations?.[RolloutAnnotation.pausedBy] !== undefined;
  const same = rolloutSettings(app).paused === paused;
  if (same && !(paused && ebbs)) return { kind: 'skip', message: `${name} already ${paused ? 'paused' : 'resumed'}` };
  const metadata = ebbs ? { metadata: { resourceVersion: app.metadata.resourceVersion, annotations: { [RolloutAnnotation.pausedBy]: null } } } : {};
  return {
    kind: 'patch',
    patch: { ...metadata, spec: { updateStrategy: { rollingUpdate: { paused } } } },
    message: `${name} ${paused ? 'paused' : 'resumed'}${same ? " (ebb's own pause taken over: an abort no longer lifts it)" : ''}`,
  };
}
