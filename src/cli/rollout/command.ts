/** `ebb rollout ...` (also `kubectl ebb rollout ...`): steer and follow an App's rollout from a terminal. */
import { stringify } from 'yaml';
import type { App } from '../../api/app.ts';
import { appRef, GROUP } from '../../api/group.ts';
import { Label } from '../../api/keys.ts';
import { formatDuration } from '../../common/duration.ts';
import { kubeConnection } from '../../kube/client.ts';
import { isKubeError } from '../../kube/errors.ts';
import { PatchType, type KubeRest } from '../../kube/rest.ts';
import type { ControllerRevision, Stored } from '../../kube/types.ts';
import { isControlledBy } from '../../workers/app/pods/predicates.ts';
import { templateOf } from '../../workers/app/revisions/revisions.ts';
import { abortRefusal } from '../../workers/app/rollout/abort-refusal.ts';
import { parseRolloutArgs, ROLLOUT_USAGE, RolloutExit, type RolloutArgs } from './args.ts';
import { followRollout, StatusPrinter } from './follow.ts';
import { chooseUndo, formatHistory } from './history.ts';
import { formatRevisionAnalysis } from './history-analysis.ts';
import { planRestart } from '../../rollout-actions/restart.ts';
import { planAbort, planPromote, planRetry, type ControlPlan } from '../../rollout-actions/control.ts';
import { planPause } from '../../rollout-actions/pause.ts';
import { summarizePods, viewRollout, type RolloutState } from './view.ts';
import { printable } from '../printable.ts';
import { onFreshApp } from '../../rollout-actions/reread.ts';
import { core } from '../../kube/paths.ts';
import type { Pod } from '../../kube/types.ts';

const EXIT_OF: Record<RolloutState, number> = {
  done: RolloutExit.done,
  progressing: RolloutExit.done,
  failed: RolloutExit.failed,
  deadline: RolloutExit.deadline,
  aborted: RolloutExit.aborted,
};

type Target = Exclude<RolloutArgs, { op: 'help' }>;

const kind = `app.${GROUP}`;

/** The App's own ControllerRevisions (by the App label, then by controller reference). */
async function revisionsOf(rest: KubeRest, app: Stored<App>): Promise<Stored<ControllerRevision>[]> {
  const list = await rest.list<Stored<ControllerRevision>>(
    { group: 'apps', version: 'v1', resource: 'controllerrevisions', namespace: app.metadata.namespace },
    { labelSelector: `${Label.app}=${app.metadata.name}` },
  );
  return list.items.filter((r) => isControlledBy(r.metadata, app.metadata.uid));
}

/**
 * Why the worker would refuse to abort the rollout in progress, from the App's revisions' numbers. An abort
 * needs only the right to patch the App: a user who may not list its revisions gets the worker's answer instead.
 */
async function refusalOf(rest: KubeRest, app: Stored<App>): Promise<string | undefined> {
  const { currentRevision, updateRevision } = app.status ?? {};
  if (!currentRevision || !updateRevision || currentRevision === updateRevision) return undefined;
  const owned = await revisionsOf(rest, app).catch((err: unknown) => {
    if (isKubeError(err, 'Forbidden')) return [];
    throw err;
  });
  const current = owned.find((r) => r.metadata.name === currentRevision);
  const update = owned.find((r) => r.metadata.name === updateRevision);
  return current && update ? abortRefusal({ owned, current, update }) : undefined;
}

/** Pause or resume (`pause.ts`): the plan's message is the CLI's answer. */
async function setPaused(rest: KubeRest, app: Stored<App>, paused: boolean): Promise<string> {
  const plan = planPause(app, paused);
  if (plan.kind === 'patch') await rest.patch(appRef(app.metadata.namespace, app.metadata.name), plan.patch, PatchType.merge);
  return `${plan.message}\n`;
}

async function undo(rest: KubeRest, app: Stored<App>, toRevision: number): Promise<{ text: string; code: number }> {
  const choice = chooseUndo(app, await revisionsOf(rest, app), toRevision);
  if (choice.kind === 'error') return { text: `ebb rollout undo: ${choice.message}\n`, code: RolloutExit.failed };
  if (choice.kind === 'skip') return { text: `${kind}/${app.metadata.name} ${choice.message}\n`, code: RolloutExit.done };
  // The resourceVersion test makes the write fail rather than undo a template someone changed meanwhile.
  const patch = [
    { op: 'test', path: '/metadata/resourceVersion', value: app.metadata.resourceVersion },
    { op: 'replace', path: '/spec/template', value: choice.template },
  ];
  await rest.patch(appRef(app.metadata.namespace, app.metadata.name), patch, PatchType.json);
  return {
    text: `${kind}/${app.metadata.name} rolled back to revision ${choice.revision.revision} (${choice.revision.metadata.name})\n`,
    code: RolloutExit.done,
  };
}

async function history(rest: KubeRest, app: Stored<App>, revision: number): Promise<{ text: string; code: number }> {
  const revisions = await revisionsOf(rest, app);
  if (revision === 0) return { text: formatHistory(app, revisions), code: RolloutExit.done };
  const found = revisions.find((r) => r.revision === revision);
  if (!found) return { text: `ebb rollout history: app "${app.metadata.name}" has no revision ${revision}\n`, code: RolloutExit.failed };
  const analysis = formatRevisionAnalysis(app, found.metadata.name);
  return {
    text: `${kind}/${app.metadata.name} revision ${revision} (${found.metadata.name})\n${analysis}${stringify({ template: templateOf(found) })}`,
    code: RolloutExit.done,
  };
}

async function restart(rest: KubeRest, app: Stored<App>, now: Date): Promise<{ text: string; code: number }> {
  const plan = planRestart(app, now);
  if (plan.kind === 'refuse') return { text: `ebb rollout restart: ${plan.message}\n`, code: RolloutExit.failed };
  await rest.patch(appRef(app.metadata.namespace, app.metadata.name), plan.patch, PatchType.merge);
  return { text: `${kind}/${app.metadata.name} restarted${plan.notes.length > 0 ? ` (${plan.notes.join('; ')})` : ''}\n`, code: RolloutExit.done };
}

/** `abort`, `retry`, `promote`: one guarded merge patch of the App (`control.ts`). */
async function control(rest: KubeRest, app: Stored<App>, op: string, plan: ControlPlan): Promise<{ text: string; code: number }> {
  if (plan.kind === 'refuse') return { text: `ebb rollout ${op}: ${plan.message}\n`, code: RolloutExit.failed };
  if (plan.kind === 'patch') await rest.patch(appRef(app.metadata.namespace, app.metadata.name), plan.patch, PatchType.merge);
  return { text: `${kind}/${app.metadata.name} ${plan.message}\n`, code: RolloutExit.done };
}

async function status(rest: KubeRest, args: Extract<Target, { op: 'status' }>, namespace: string): Promise<number> {
  const printer = new StatusPrinter(process.stdout);
  if (!args.watch) {
    const [app, pods] = await Promise.all([
      rest.get<App>(appRef(namespace, args.name)),
      rest.list<Pod>(core('pods', namespace), { labelSelector: `${Label.app}=${args.name}` }),
    ]);
    const view = viewRollout(app, summarizePods(pods.items));
    new StatusPrinter(process.stdout, false).show(view);
    if (view.final) printer.finish(view.final);
    return EXIT_OF[view.state];
  }
  await rest.get<App>(appRef(namespace, args.name)); // fails at once, with the apiserver's words, when there is no such App
  const deadline = args.timeoutMs === undefined ? undefined : AbortSignal.timeout(args.timeoutMs);
  const interrupted = new AbortController();
  const onSigint = (): void => interrupted.abort();
  process.once('SIGINT', onSigint);
  try {
    const signal = deadline ? AbortSignal.any([deadline, interrupted.signal]) : interrupted.signal;
    const result = await followRollout({ rest, namespace, name: args.name, signal, onView: (v) => printer.show(v) });
    if (result.kind === 'final') {
      printer.finish(result.view.final ?? '');
      return EXIT_OF[result.view.state];
    }
    if (result.kind === 'deleted') {
      printer.finish(`app "${args.name}" was deleted`);
      return RolloutExit.failed;
    }
    if (deadline?.aborted) {
      printer.finish(`timed out after ${formatDuration(args.timeoutMs ?? 0)} waiting for app "${args.name}" to roll out`);
      return RolloutExit.timeout;
    }
    printer.finish('interrupted');
    return 130;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

type Steering = Exclude<Target, { op: 'status' | 'explain' }>;

/** The subcommands that write to the App (and `history`, which reads it): each planned on the App as read. */
async function steer(rest: KubeRest, app: Stored<App>, args: Steering): Promise<{ text: string; code: number }> {
  switch (args.op) {
    case 'pause':
    case 'resume':
      return { text: await setPaused(rest, app, args.op === 'pause'), code: RolloutExit.done };
    case 'undo':
      return undo(rest, app, args.toRevision);
    case 'history':
      return history(rest, app, args.revision);
    case 'restart':
      return restart(rest, app, new Date());
    case 'abort':
      return control(rest, app, args.op, planAbort(app, await refusalOf(rest, app)));
    case 'retry':
      return control(rest, app, args.op, planRetry(app));
    case 'promote':
      return control(rest, app, args.op, planPromote(app, args.full));
  }
}

/**
 * `ebb rollout <subcommand> app/NAME`: the kubeconfig as every ebb command reads it (KUBECONFIG, else
 * ~/.kube/config, else in-cluster), at its current context or `--context`. Bad arguments throw UsageError (exit
 * code 2); apiserver errors are thrown and printed by the dispatcher (exit code 1).
 */
export async function rolloutCommand(argv: string[]): Promise<number> {
  const args = parseRolloutArgs(argv);
  if (args.op === 'help') {
    process.stdout.write(ROLLOUT_USAGE);
    return 0;
  }
  const { loadRolloutCliConfig } = await import('./config.ts');
  const { rest, config } = await kubeConnection(loadRolloutCliConfig(), args.context);
  const namespace = args.namespace ?? config.namespace ?? 'default';
  if (args.op === 'status') return status(rest, args, namespace);
  if (args.op === 'explain') return (await import('./explain/command.ts')).explainCommand(rest, args, namespace);
  const read = (): Promise<Stored<App>> => rest.get<Stored<App>>(appRef(namespace, args.name));
  // Each write is planned on the App as read, and planned again when the App changed before it landed.
  const out = await onFreshApp(read, (app) => steer(rest, app, args), args.op === 'undo' ? ['Conflict', 'Invalid'] : ['Conflict']);
  (out.code === RolloutExit.done ? process.stdout : process.stderr).write(printable(out.text, { keepNewlines: true }));
  return out.code;
}
