/** Pure: `ebb rollout explain`'s answer from what it read (`ExplainInput` → `Explanation`). */
import type { App } from '../../../api/app.ts';
import { ConditionType, Reason } from '../../../api/keys.ts';
import { UpdateStrategyType } from '../../../api/update-strategy.ts';
import type { Pod, Stored } from '../../../kube/types.ts';
import { getOrdinal } from '../../../workers/app/pods/predicates.ts';
import { phaseOf, summarizePods, viewRollout } from '../view.ts';
import type { ExplainInput, Explanation, PodExplanation, WaitItem } from './model.ts';
import { actionPod, describeAction, nextSteps } from './next.ts';
import { podWaits, refusalsOf, revisionMark, type PodContext } from './pods.ts';
import { explainPrewarm } from './prewarm.ts';

const trueCondition = (app: App, type: string) => app.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** `canary step 2: paused until <ISO time>` → that time. */
function pausedUntil(message: string | undefined): string | undefined {
  const m = /until (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(message ?? '');
  return m?.[1];
}

/** What the rollout as a whole waits for, from the App's conditions (the same ones `rollout status` shows). */
export function appWaits(app: App): WaitItem[] {
  const out: WaitItem[] = [];
  const generation = app.metadata.generation ?? 0;
  if ((app.status?.observedGeneration ?? 0) < generation)
    out.push({ kind: 'generation', message: `ebb has not seen generation ${generation} yet (status is of generation ${app.status?.observedGeneration ?? 0})` });
  const invalid = trueCondition(app, ConditionType.invalidSpec);
  if (invalid) out.push({ kind: 'invalid', message: `invalid spec: ${invalid.message ?? ''}` });
  const paused = trueCondition(app, ConditionType.paused);
  if (paused)
    out.push({
      kind: 'paused',
      message: paused.message ?? 'paused',
      until: paused.reason === Reason.canaryTimedPause ? pausedUntil(paused.message) : undefined,
    });
  for (const r of refusalsOf(app)) out.push({ kind: r.kind, message: r.message });
  const hook = trueCondition(app, ConditionType.lifecycleHookWaiting);
  if (hook) out.push({ kind: 'hook', message: hook.message ?? 'pods wait on a lifecycle hook' });
  for (const type of [ConditionType.failedCreatePod, ConditionType.failedUpdatePod, ConditionType.volumeExpansionRefused]) {
    const c = trueCondition(app, type);
    if (c) out.push({ kind: type, message: c.message ?? c.reason ?? '' });
  }
  const progressing = app.status?.conditions?.find((c) => c.type === ConditionType.progressing);
  if (progressing?.reason === Reason.progressDeadlineExceeded) out.push({ kind: 'deadline', message: progressing.message ?? 'progress deadline exceeded' });
  else if (progressing?.reason === Reason.scaleUpLimited || progressing?.reason === Reason.specifiedDeletePending)
    out.push({ kind: 'deferred', message: progressing.message ?? progressing.reason });
  const prewarm = app.status?.conditions?.find((c) => c.type === ConditionType.imagesPrewarmed);
  if (prewarm && prewarm.status !== 'True' && (app.status?.prewarm?.nodesRequested ?? 0) > 0) out.push({ kind: 'prewarm', message: prewarm.message ?? '' });
  return out;
}

/** Why pods still to update are not updated now, when it is the rollout's doing (pause, canary pause, OnDelete). */
function rolloutWait(app: App): string | undefined {
  if ((app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate) !== UpdateStrategyType.rollingUpdate)
    return 'OnDelete: updated when someone deletes it';
  const paused = trueCondition(app, ConditionType.paused);
  return paused ? `the rollout is paused (${paused.reason ?? ''})` : undefined;
}

const ordinalOf = (app: App, pod: Pod): number => getOrdinal(app.metadata.name ?? '', pod.metadata.name);

export function explain(input: ExplainInput): Explanation {
  const { app, now } = input;
  const pods = input.pods as Stored<Pod>[];
  const summary = summarizePods(pods);
  const view = viewRollout(app, summary);
  const held = trueCondition(app, ConditionType.rolloutHeld) !== undefined;
  const prewarm = explainPrewarm(app, pods, input.imageLists);
  const ru = app.spec.updateStrategy?.rollingUpdate;
  const ctx: PodContext = {
    app,
    now,
    update: app.status?.updateRevision,
    current: app.status?.currentRevision,
    partition: ru?.partition ?? 0,
    rolloutWait: rolloutWait(app),
    refusals: refusalsOf(app),
    prewarm: new Map((prewarm?.nodes ?? []).map((n) => [n.node, n])),
  };
  const planned = new Map<string, string[]>();
  for (const a of input.plan?.actions ?? []) {
    const pod = actionPod(a);
    const text = describeAction(a, held);
    if (pod && text) planned.set(pod, [...(planned.get(pod) ?? []), text]);
  }
  const rows: PodExplanation[] = [...pods]
    .sort((a, b) => ordinalOf(app, b) - ordinalOf(app, a))
    .map((pod) => ({
      name: pod.metadata.name,
      revision: revisionMark(ctx, pod),
      node: pod.spec?.nodeName,
      ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      waits: podWaits(ctx, pod),
      next: planned.get(pod.metadata.name) ?? [],
    }));
  const notes = [...input.notes];
  if (prewarm && input.imageLists === undefined) notes.push('pre-warm progress per node is unknown: the ImageLists could not be read');
  return {
    at: now.toISOString(),
    app: {
      namespace: app.metadata.namespace ?? '',
      name: app.metadata.name ?? '',
      generation: app.metadata.generation ?? 0,
      observedGeneration: app.status?.observedGeneration ?? 0,
    },
    state: view.state,
    line: view.line,
    phase: phaseOf(app, summary),
    revisions: { current: app.status?.currentRevision, update: app.status?.updateRevision },
    strategy: {
      type: app.spec.updateStrategy?.type ?? UpdateStrategyType.rollingUpdate,
      podUpdatePolicy: ru?.podUpdatePolicy ?? 'ReCreate',
      partition: ru?.partition ?? 0,
      paused: ru?.paused ?? false,
    },
    waits: appWaits(app),
    pods: rows,
    prewarm,
    next: nextSteps(input.plan, input.queue, held, now),
    lastReconcile: input.queue?.last,
    notes,
  };
}
