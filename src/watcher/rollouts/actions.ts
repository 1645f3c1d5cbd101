/**
 * Pure: the rollouts page's actions on an App. Each is planned by the very functions `ebb rollout` plans with
 * (`src/rollout-actions`): the same merge patch, guarded by the App's resourceVersion where the command guards
 * it. The page adds who asked: an Event on the App (reason ActionRequested) naming the viewer.
 */
import type { App } from '../../api/app.ts';
import { API_VERSION, APP_KIND, GROUP } from '../../api/group.ts';
import { planAbort, planPromote, planRetry, type ControlPlan } from '../../rollout-actions/control.ts';
import { planPause } from '../../rollout-actions/pause.ts';
import { planRestart } from '../../rollout-actions/restart.ts';

export const ACTIONS = ['pause', 'resume', 'abort', 'retry', 'promote', 'restart'] as const;
export type RolloutAction = (typeof ACTIONS)[number];

export const isAction = (s: string): s is RolloutAction => (ACTIONS as readonly string[]).includes(s);

/** The Event's reason. */
export const ACTION_REQUESTED = 'ActionRequested';

/** Each action's button and what the confirm step says it does. */
export const ACTION_TEXT: Readonly<Record<RolloutAction, { label: string; does: string }>> = {
  pause: { label: 'Pause', does: 'pauses the rollout: no more pod is updated until someone resumes it' },
  resume: { label: 'Resume', does: 'resumes the paused rollout' },
  abort: { label: 'Abort', does: 'aborts the rollout: the pods go back to the stable revision (the spec is unchanged)' },
  retry: { label: 'Retry', does: 'retries the aborted rollout from its first step' },
  promote: { label: 'Promote', does: 'skips the remaining canary steps (and lifts a pause ebb set)' },
  restart: { label: 'Restart', does: 'replaces every pod: a new revision stamped with the time' },
};

/**
 * What `op` writes on `app` as read, as `ebb rollout <op>` plans it. Abort is planned without the refusal
 * the command reads from the App's ControllerRevisions (the watcher does not read them): the worker refuses
 * such an abort itself, in the App's status.
 */
export function planAction(op: RolloutAction, app: App, now: Date): ControlPlan {
  switch (op) {
    case 'pause':
    case 'resume':
      return planPause(app, op === 'pause');
    case 'abort':
      return planAbort(app);
    case 'retry':
      return planRetry(app);
    case 'promote':
      return planPromote(app);
    case 'restart': {
      const plan = planRestart(app, now);
      if (plan.kind === 'refuse') return plan;
      return {
        kind: 'patch',
        patch: plan.patch,
        message: `app.${GROUP}/${app.metadata.name ?? ''} restarted${plan.notes.length > 0 ? ` (${plan.notes.join('; ')})` : ''}`,
      };
    }
  }
}

/** The actions that would write something on `app` now: the page offers those alone. */
export const actionsFor = (app: App, now: Date): RolloutAction[] => ACTIONS.filter((op) => planAction(op, app, now).kind === 'patch');

/** The Event's note: who asked for what. */
export const actionNote = (op: RolloutAction, user: string): string => `${op} requested by ${user} from the rollouts page`;

/** Who reports an Event, and when: `suffix` makes its name unique. */
export interface Reporting {
  now: Date;
  instance: string;
  suffix: string;
}

/** The Event recording that `user` asked for `op` on `app` (events.k8s.io/v1). */
export function actionEvent(app: App, op: RolloutAction, user: string, { now, instance, suffix }: Reporting): Record<string, unknown> {
  const name = app.metadata.name ?? '';
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${name}.${now.getTime().toString(16)}${suffix}`, namespace: app.metadata.namespace },
    eventTime: now.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    reportingController: `${GROUP}/ebb`,
    reportingInstance: instance,
    action: ACTION_TEXT[op].label,
    reason: ACTION_REQUESTED,
    type: 'Normal',
    note: actionNote(op, user).slice(0, 1024),
    regarding: { apiVersion: API_VERSION, kind: APP_KIND, name, namespace: app.metadata.namespace, uid: app.metadata.uid },
  };
}
