/**
 * One action from the rollouts page, written: the App read, planned (actions.ts), patched as `ebb rollout`
 * patches it, and planned again on a fresh read when the App changed before the write landed (a Conflict, as
 * the command does). The viewer confirmed an action on the rollout they saw: when the App's update revision is
 * no longer the one confirmed, nothing is written. A write is followed by the Event naming who asked.
 */
import { randomBytes } from 'node:crypto';
import type { App } from '../../api/app.ts';
import { errorSummary } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import { isKubeError } from '../../kube/errors.ts';
import type { Stored } from '../../kube/types.ts';
import { onFreshApp } from '../../rollout-actions/reread.ts';
import { actionEvent, planAction, type RolloutAction } from './actions.ts';

/** What the watcher does to the apiserver for an action: a narrow interface (a fake in unit tests). */
export interface AppWriter {
  get(namespace: string, name: string, signal: AbortSignal): Promise<Stored<App>>;
  patch(namespace: string, name: string, patch: unknown, signal: AbortSignal): Promise<void>;
  createEvent(namespace: string, body: Record<string, unknown>, signal: AbortSignal): Promise<void>;
}

export interface ActionRequest {
  namespace: string;
  name: string;
  op: RolloutAction;
  /** The viewer's user name, as the TokenReview named it. */
  user: string;
  /** The update revision the viewer confirmed the action on. */
  revision: string;
}

export type ActionOutcome =
  | { kind: 'done'; message: string }
  | { kind: 'skip'; message: string }
  | { kind: 'refuse'; message: string }
  | { kind: 'changed'; message: string }
  | { kind: 'gone' };

export interface ActionDeps {
  writer: AppWriter;
  log?: Logger | undefined;
  /** Names the Events' reporting instance. */
  instance: string;
  now?: () => Date;
}

/** Writes `req`'s action (or says why nothing was written); throws what the apiserver answers otherwise. */
export async function runAction(deps: ActionDeps, req: ActionRequest, signal: AbortSignal): Promise<ActionOutcome> {
  const now = deps.now ?? (() => new Date());
  const read = (): Promise<Stored<App>> => deps.writer.get(req.namespace, req.name, signal);
  let written: Stored<App> | undefined;
  let outcome: ActionOutcome;
  try {
    outcome = await onFreshApp(read, async (app): Promise<ActionOutcome> => {
      const at = app.status?.updateRevision ?? '';
      if (at !== req.revision)
        return {
          kind: 'changed',
          message: `the rollout changed since you confirmed (update revision ${at || 'none'}, not ${req.revision || 'none'}): look again`,
        };
      const plan = planAction(req.op, app, now());
      if (plan.kind !== 'patch') return plan;
      await deps.writer.patch(req.namespace, req.name, plan.patch, signal);
      written = app;
      return { kind: 'done', message: plan.message };
    });
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return { kind: 'gone' };
    throw err;
  }
  if (written) await recordEvent(deps, written, req, now());
  return outcome;
}

/** The Event naming who asked; a failure to write it is logged, the action stands. */
async function recordEvent(deps: ActionDeps, app: Stored<App>, req: ActionRequest, at: Date): Promise<void> {
  const body = actionEvent(app, req.op, req.user, { now: at, instance: deps.instance, suffix: randomBytes(4).toString('hex') });
  try {
    await deps.writer.createEvent(req.namespace, body, AbortSignal.timeout(10_000));
  } catch (err) {
    deps.log?.warn({ namespace: req.namespace, name: req.name, action: req.op, err: errorSummary(err) }, 'rollouts page: could not record the action Event');
  }
}
