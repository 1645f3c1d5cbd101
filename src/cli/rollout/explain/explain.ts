/** Pure: `ebb rollout explain`'s answer from what it read (`ExplainInput` → `Explanation`). */
import type { App } from '../../../api/app.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import { UpdateStrategyType } from '../../../api/update-strategy.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { getOrdinal } from '../../../workers/app/pods/predicates.ts';
import { rolloutSettings } from '../../../workers/app/model/rollout-settings.ts';
import { phaseOf, summarizePods, viewRollout } from '../view.ts';
import type { ExplainInput, Explanation, NextStep, PodExplanation, WaitItem } from './model.ts';
import { actionPod, describeAction, nextSteps } from './next.ts';
import { podWaits, refusalsOf, revisionMark, type PodContext } from './pods.ts';
import { explainPrewarm } from './prewarm.ts';

const trueCondition = (app: App, type: string) => app.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** `canary step 2: paused until <ISO time>` → that time. */
function pausedUntil(message: string | undefined): string | undefined {
  const m = /until (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(message ?? '');
  return m?.[1];
}

function generationWait(app: App): WaitItem[] {
  const generation = app.metadata.generation ?? 0;
  const observed = app.status?.observedGeneration ?? 0;
  return observed < generation ? [{ kind: 'generation', message: `ebb has not seen generation ${generation} yet (status is of generation ${observed})` }] : [];
}

function pausedWait(app: App): WaitItem[] {
  const paused = trueCondition(app, ConditionType.paused);
  if (!paused) return [];
  return [{ kind: 'paused', message: paused.message ?? 'paused', until: paused.reason === Reason.canaryTimedPause ? pausedUntil(paused.message) : undefined }];
}

/** Conditions that, when True, are a wait by themselves, and their kind in the answer. */
const WAITING_CONDITIONS: readonly [string, string][] = [
  [ConditionType.invalidSpec, 'invalid'],
  [ConditionType.lifecycleHookWaiting, 'hook'],
  [ConditionType.failedCreatePod, 'failedCreatePod'],
  [ConditionType.failedUpdatePod, 'failedUpdatePod'],
  [ConditionType.volumeExpansionRefused, 'volumeExpansionRefused'],
];

function conditionWaits(app: App): WaitItem[] {
  return WAITING_CONDITIONS.flatMap(([type, kind]) => {
    const c = trueCondition(app, type);
    return c ? [{ kind, message: c.message ?? c.reason ?? type }] : [];
  });
}

function progressingWait(app: App): WaitItem[] {
  const p = app.status?.conditions?.find((c) => c.type === ConditionType.progressing);
  if (p?.reason === Reason.progressDeadlineExceeded) return [{ kind: 'deadline', message: p.message ?? 'progress deadline exceeded' }];
  if (p?.reason === Reason.scaleUpLimited || p?.reason === Reason.specifiedDeletePending) return [{ kind: 'deferred', message: p.message ?? p.reason }];
  return [];
}

function prewarmWait(app: App): WaitItem[] {
  const c = app.status?.conditions?.find((x) => x.type === ConditionType.imagesPrewarmed);
  const requested = app.status?.prewarm?.nodesRequested ?? 0;
  return c && c.status !== 'True' && requested > 0 ? [{ kind: 'prewarm', message: c.message ?? c.reason ?? '' }] : [];
}

/** What the rollout as a whole waits for, from the App's conditions (the same ones `rollout status` shows). */
export function appWaits(app: App): WaitItem[] {
  return [...generationWait(app), ...pausedWait(app), ...refusalsOf(app), ...conditionWaits(app), ...progressingWait(app), ...prewarmWait(app)];
}

/** Why pods still to update are not updated now, when it is the rollout's doing (pause, canary pause, OnDelete). */
function rolloutWait(app: App): string | undefined {
  if (!rolloutSettings(app).rolling) return 'OnDelete: updated when someone deletes it';
  const paused = trueCondition(app, ConditionType.paused);
  return paused ? `the rollout is paused (${paused.reason ?? ''})` : undefined;
}

/** A pause only a person ends (the spec's, a canary pause step without a duration): said as the next step. */
function resumeStep(app: App): NextStep[] {
  const paused = trueCondition(app, ConditionType.paused);
  if (paused?.reason !== Reason.pausedBySpec && paused?.reason !== Reason.canaryPause) return [];
  return [{ what: `nothing more until someone resumes the rollout (ebb rollout resume app/${app.metadata.name ?? ''})`, source: 'status' }];
}

const ordinalOf = (app: App, pod: Pod): number => getOrdinal(app.metadata.name ?? '', pod.metadata.name);

/** The plan's writes in words, by the pod they are about. */
function plannedByPod(input: ExplainInput, held: boolean): Map<string, string[]> {
  const planned = new Map<string, string[]>();
  for (const a of input.plan?.actions ?? []) {
    const pod = actionPod(a);
    const text = describeAction(a, held);
    if (pod && text) planned.set(pod, [...(planned.get(pod) ?? []), text]);
  }
  return planned;
}

/** The pods, highest ordinal first (the order a rolling update goes in). */
function podRows(input: ExplainInput, ctx: PodContext, planned: ReadonlyMap<string, string[]>): PodExplanation[] {
  const { app } = input;
  return [...(input.pods as Stored<Pod>[])]
    .sort((a, b) => ordinalOf(app, b) - ordinalOf(app, a))
    .map((pod) => ({
      name: pod.metadata.name,
      revision: revisionMark(ctx, pod),
      node: pod.spec?.nodeName,
      ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      waits: podWaits(ctx, pod),
      next: planned.get(pod.metadata.name) ?? [],
    }));
}

function strategyOf(app: App): Explanation['strategy'] {
  const settings = rolloutSettings(app);
  return {
    type: app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate,
    podUpdatePolicy: settings.podUpdatePolicy ?? 'ReCreate',
    partition: settings.partition,
    paused: settings.paused,
  };
}

function identityOf(app: App): Explanation['app'] {
  const m = app.metadata;
  return { namespace: m.namespace ?? '', name: m.name ?? '', generation: m.generation ?? 0, observedGeneration: app.status?.observedGeneration ?? 0 };
}

export function explain(input: ExplainInput): Explanation {
  const { app, now } = input;
  const summary = summarizePods(input.pods);
  const view = viewRollout(app, summary);
  const held = trueCondition(app, ConditionType.rolloutHeld) !== undefined;
  const prewarm = explainPrewarm(app, input.pods, input.imageLists);
  const strategy = strategyOf(app);
  const planned = plannedByPod(input, held);
  const ctx: PodContext = {
    app,
    now,
    update: app.status?.updateRevision,
    current: app.status?.currentRevision,
    partition: strategy.partition,
    rolloutWait: rolloutWait(app),
    refusals: refusalsOf(app),
    prewarm: new Map((prewarm?.nodes ?? []).map((n) => [n.node, n])),
    planned: new Set(planned.keys()),
  };
  const unread = prewarm && input.imageLists === undefined ? ['pre-warm progress per node is unknown: the ImageLists could not be read'] : [];
  if (input.queue && !input.queue.last)
    unread.push(
      "the queues hold no finished reconcile of this App (they keep the newest EBB_QUEUE_REMOVE_ON_COMPLETE jobs; is EBB_QUEUE_PREFIX the watcher's?)",
    );
  return {
    at: now.toISOString(),
    app: identityOf(app),
    state: view.state,
    line: view.line,
    phase: phaseOf(app, summary),
    revisions: { current: app.status?.currentRevision, update: app.status?.updateRevision },
    strategy,
    waits: appWaits(app),
    pods: podRows(input, ctx, planned),
    prewarm,
    next: [...nextSteps(input.plan, input.queue, held, now), ...resumeStep(app)],
    lastReconcile: input.queue?.last,
    notes: [...input.notes, ...unread],
  };
}
