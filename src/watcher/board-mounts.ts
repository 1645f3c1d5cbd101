/**
 * Bull Board and the rollouts page beside it (same login), loaded only when the board is on (they and their web
 * stack cost memory an idle watcher does not need): every import of theirs here is dynamic.
 */
import { hostname } from 'node:os';
import type { Queue } from 'bullmq';
import { appRef } from '../api/group.ts';
import type { App } from '../api/app.ts';
import type { Handler } from '../common/http.ts';
import type { Logger } from '../common/log.ts';
import { PatchType, type KubeRest } from '../kube/rest.ts';
import type { Stored } from '../kube/types.ts';
import type { WatcherConfig } from './config.ts';
import type { KubeReviewer } from './board-kube-auth.ts';
import type { AppWriter } from './rollouts/action-run.ts';
import type { RolloutStore } from './rollouts/store.ts';

/** The field manager of the page's writes (an App's managedFields name the page). */
export const ACTIONS_FIELD_MANAGER = 'ebb-rollouts-page';

/** The watcher's own writes for the page's actions: the App's patch and the Event naming who asked. */
export function restAppWriter(rest: KubeRest): AppWriter {
  return {
    get: (namespace, name, signal) => rest.get<Stored<App>>(appRef(namespace, name), signal),
    patch: async (namespace, name, patch, signal) => {
      await rest.patch(appRef(namespace, name), patch, PatchType.merge, { fieldManager: ACTIONS_FIELD_MANAGER }, signal);
    },
    createEvent: async (namespace, body, signal) => {
      await rest.create({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }, body, {}, signal);
    },
  };
}

/** The rollouts page's actions, with a Kubernetes login only (they need a user to review and to name). */
async function actionOptions(rest: KubeRest, reviewer: KubeReviewer | undefined, log: Logger) {
  if (!reviewer) return undefined;
  const { kubeActionAuthority, ActionLimit } = await import('./rollouts/action-auth.ts');
  return {
    authority: kubeActionAuthority(rest, reviewer),
    limit: new ActionLimit(),
    deps: { writer: restAppWriter(rest), log, instance: `ebb-watcher-${hostname()}`.slice(0, 128) },
  };
}

export async function boardMounts(
  cfg: WatcherConfig,
  queues: readonly unknown[],
  rest: KubeRest,
  log: Logger,
  rollouts: RolloutStore | undefined,
): Promise<{ prefix: string; handler: Handler }[]> {
  if (!cfg.board) return [];
  const { boardGate, boardHandler } = await import('./board.ts');
  const { rolloutsPathFor } = await import('./rollouts/path.ts');
  const { kubeReviewer } = await import('./board-kube-auth.ts');
  const auth = cfg.board.auth;
  const kube = auth.kind === 'kubernetes' ? kubeReviewer(rest, auth.access, { writable: !cfg.board.readOnly }) : undefined;
  const base = rolloutsPathFor(cfg.board.basePath);
  const opts = { ...cfg.board, reviewer: kube?.review, log, rolloutsPath: rollouts ? base : undefined };
  const mounts = [{ prefix: cfg.board.basePath, handler: boardHandler(queues as Queue<unknown, unknown, string>[], opts) }];
  if (!rollouts) return mounts;
  const { rolloutsHandler } = await import('./rollouts/handler.ts');
  const { restAppReader } = await import('./rollouts/detail-read.ts');
  const page = rolloutsHandler({
    base,
    boardPath: cfg.board.basePath,
    store: rollouts,
    // The page reviews its own changes (a viewer's right to patch the App), not the board's right to change jobs.
    gate: (req, res) => boardGate(req, res, opts, false),
    reader: restAppReader(rest),
    actions: await actionOptions(rest, kube, log),
    log,
  });
  return [...mounts, { prefix: base, handler: page }];
}
