/**
 * The pull benchmark's canary with a pause, as a user writes it: `canary.steps: [{replicas: 1}, {pause: {}}]`.
 * The first pod (the highest ordinal) is updated, ebb pauses the rollout (`rollingUpdate.paused: true`) and
 * pre-warm, which warms every remaining pod's node while a rollout waits, pulls on the other nodes. The bench
 * resumes as a person would once they are warm: when every ImageList of the nodes of the pods still to update
 * reports the image `Pulled` (a condition, not a fixed sleep), with the write `ebb rollout resume` makes.
 */
import { appRef, imageListRef } from '../../src/api/group.ts';
import type { App } from '../../src/api/app.ts';
import { ImagePhase, type ImageList } from '../../src/api/image-list.ts';
import type { CanaryStep } from '../../src/api/update-strategy.ts';
import { waitFor } from '../../src/common/wait.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import { planPause } from '../../src/rollout-actions/pause.ts';
import { rolloutSettings } from '../../src/workers/app/model/rollout-settings.ts';
import type { Workload } from './workloads.ts';

export const CANARY_STEPS: readonly CanaryStep[] = [{ replicas: 1 }, { pause: {} }];
/** Index of the pause step in CANARY_STEPS: status.canary.step while the rollout waits there. */
export const PAUSE_STEP = 1;

/** Sets the canary steps on the App (no template change: no rollout starts). */
export async function setCanary(rest: KubeRest, w: Workload): Promise<void> {
  await rest.patch(appRef(w.namespace, w.name), { spec: { updateStrategy: { rollingUpdate: { canary: { steps: CANARY_STEPS } } } } }, PatchType.merge);
}

/** The App waits at the pause step of the update revision, paused by it. */
export function atCanaryPause(app: App): boolean {
  const status = app.status;
  return (
    rolloutSettings(app).paused &&
    status?.canary?.step === PAUSE_STEP &&
    status.updateRevision !== undefined &&
    status.updateRevision !== status.currentRevision
  );
}

/** Waits until the App is at the canary's pause step. */
export async function untilCanaryPause(rest: KubeRest, w: Workload, signal: AbortSignal): Promise<void> {
  await waitFor(async () => (atCanaryPause(await rest.get<App>(appRef(w.namespace, w.name))) ? true : undefined), {
    timeoutMs: 600_000,
    intervalMs: 100,
    signal,
    what: `${w.namespace}/${w.name} at the canary pause`,
  });
}

/** The nodes among `nodes` whose ImageList does not report `image` Pulled (no ImageList: not pulled). */
export function notPulled(lists: ReadonlyMap<string, ImageList>, nodes: readonly string[], image: string): string[] {
  return nodes.filter((n) => lists.get(n)?.status?.images?.find((i) => i.image === image)?.phase !== ImagePhase.pulled);
}

/** Waits until the ImageList of every node in `nodes` reports `image` Pulled. */
export async function untilPulled(rest: KubeRest, nodes: readonly string[], image: string, signal: AbortSignal): Promise<void> {
  const read = async (n: string): Promise<[string, ImageList] | undefined> =>
    rest.get<ImageList>(imageListRef(n)).then(
      (l) => [n, l] as [string, ImageList],
      (err: unknown) => {
        if (isKubeError(err, 'NotFound')) return undefined;
        throw err;
      },
    );
  await waitFor(
    async () => {
      const lists = new Map((await Promise.all(nodes.map(read))).filter((e) => e !== undefined));
      return notPulled(lists, nodes, image).length === 0 ? true : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 100, signal, what: `${image} pulled on ${nodes.join(', ')}` },
  );
}

/** Ends the pause step as `ebb rollout resume` does (its own planner, its merge patch). */
export async function resume(rest: KubeRest, w: Workload): Promise<void> {
  const plan = planPause(await rest.get<App>(appRef(w.namespace, w.name)), false);
  if (plan.kind !== 'patch') throw new Error(`${w.namespace}/${w.name}: resume wrote nothing (${plan.message})`);
  await rest.patch(appRef(w.namespace, w.name), plan.patch, PatchType.merge);
}

export interface PauseTimes {
  /** Template change → the App at the pause step. */
  pausedAt: number;
  /** When the other nodes reported the image pulled. */
  warmAt: number;
  /** When the bench resumed the rollout. */
  resumedAt: number;
  /** The kubelets' `Pulling` count of the rollout at the resume. */
  pullingAtResume: number;
}

/**
 * Takes a canary rollout through its pause: waits for the pause step, for the image Pulled on the nodes of the
 * pods still at the old image (`seen.pods()` says which pod runs what where), then resumes. `seen.pulling()` counts the
 * rollout's kubelet `Pulling` Events so far.
 */
export async function throughPause(
  rest: KubeRest,
  w: Workload,
  image: string,
  seen: { pods: () => { image: string | undefined; node: string | undefined }[]; pulling: () => Promise<number> },
  signal: AbortSignal,
): Promise<PauseTimes> {
  const { pods, pulling } = seen;
  const clock = (): number => performance.timeOrigin + performance.now();
  await untilCanaryPause(rest, w, signal);
  const pausedAt = clock();
  const others = [...new Set(pods().flatMap((p) => (p.image !== image && p.node !== undefined ? [p.node] : [])))];
  await untilPulled(rest, others, image, signal);
  const warmAt = clock();
  const pullingAtResume = await pulling();
  const resumedAt = clock();
  await resume(rest, w);
  return { pausedAt, warmAt, resumedAt, pullingAtResume };
}
