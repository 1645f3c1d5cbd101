/**
 * Pure: the little the rollouts list keeps of one App, read from the App object the watcher receives anyway.
 * Everything a tenant writes is bounded here (messages and images truncated, at most MAX_IMAGES images), so one
 * App costs at most a few kilobytes whatever its spec and status hold.
 */
import { ConditionType, Reason } from '../../api/keys.ts';
import type { App } from '../../api/app.ts';
import type { KubeObject } from '../../kube/types.ts';
import { rolloutSettings } from '../../workers/app/model/rollout-settings.ts';

/**
 * The state of a rollout, in the order the list puts them (what needs attention first):
 * - `aborted`: the Aborted condition is True (the pods go or went back to the current revision);
 * - `quarantined`: the App is quarantined (ebb stopped reconciling it after repeated failures);
 * - `held`: the rollout cannot go on by itself: RolloutHeld, InvalidSpec or FailedCreatePod is True, or the
 *   progress deadline passed;
 * - `paused`: the Paused condition is True (the spec, a canary pause step, an analysis that asked for it);
 * - `rolling`: pods are still to update (the update revision is not every pod's), or a rollout or scale goes on;
 * - `complete`: none of the above.
 */
export const ROLLOUT_STATES = ['aborted', 'quarantined', 'held', 'paused', 'rolling', 'complete'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

/** The longest message kept, in characters. */
export const MAX_MESSAGE = 240;
/** The longest image reference or revision name kept. */
export const MAX_TEXT = 200;
/** At most this many images of the template are kept (the rest counted). */
export const MAX_IMAGES = 4;

export interface AppSummary {
  namespace: string;
  name: string;
  state: RolloutState;
  /** The message of the condition that decided the state (truncated); empty when there is none. */
  message: string;
  replicas: number;
  updated: number;
  ready: number;
  currentRevision: string;
  updateRevision: string;
  /** The current canary step and the number of steps; undefined without canary steps. */
  canary: { step: number; steps: number } | undefined;
  images: string[];
  /** Images of the template left out of `images`. */
  moreImages: number;
}

interface LooseCondition {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
}

interface LooseApp {
  metadata?: { namespace?: string; name?: string };
  spec?: {
    replicas?: unknown;
    template?: { spec?: { containers?: { image?: unknown }[] } };
  };
  status?: {
    replicas?: unknown;
    updatedReplicas?: unknown;
    readyReplicas?: unknown;
    currentRevision?: unknown;
    updateRevision?: unknown;
    canary?: { step?: unknown };
    conditions?: LooseCondition[];
  };
}

/** `text` cut to `max` characters, an ellipsis marking the cut. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const str = (v: unknown, max = MAX_TEXT): string => (typeof v === 'string' ? truncate(v, max) : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

function decide(
  conditions: readonly LooseCondition[],
  s: { replicas: number; updated: number; revisionsDiffer: boolean },
): { state: RolloutState; by?: LooseCondition } {
  const isTrue = (type: string): LooseCondition | undefined => conditions.find((c) => c.type === type && c.status === 'True');
  const aborted = isTrue(ConditionType.aborted);
  if (aborted) return { state: 'aborted', by: aborted };
  const quarantined = isTrue(ConditionType.quarantined);
  if (quarantined) return { state: 'quarantined', by: quarantined };
  const held = isTrue(ConditionType.rolloutHeld) ?? isTrue(ConditionType.invalidSpec) ?? isTrue(ConditionType.failedCreatePod);
  if (held) return { state: 'held', by: held };
  const progressing = conditions.find((c) => c.type === ConditionType.progressing);
  if (progressing?.status === 'False' && progressing.reason === Reason.progressDeadlineExceeded) return { state: 'held', by: progressing };
  const paused = isTrue(ConditionType.paused);
  if (paused) return { state: 'paused', by: paused };
  if (s.revisionsDiffer || s.updated < s.replicas || progressing?.status === 'True') return { state: 'rolling', by: progressing };
  return { state: 'complete' };
}

/** The canary step and the number of steps (of the spec's rollout settings); undefined without steps. */
function canaryOf(app: LooseApp): AppSummary['canary'] {
  const steps = app.spec ? rolloutSettings(app as unknown as App).canarySteps.length : 0;
  return steps > 0 ? { step: Math.min(num(app.status?.canary?.step), steps), steps } : undefined;
}

function imagesOf(app: LooseApp): string[] {
  const containers = app.spec?.template?.spec?.containers;
  return (Array.isArray(containers) ? containers : []).map((c) => str(c.image)).filter((i) => i !== '');
}

/** The summary of an App object; undefined for an object without a namespace and a name. */
export function summarize(obj: KubeObject): AppSummary | undefined {
  const app = obj as LooseApp;
  const namespace = app.metadata?.namespace;
  const name = app.metadata?.name;
  if (!namespace || !name) return undefined;
  const status = app.status ?? {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const replicas = num(status.replicas);
  const updated = num(status.updatedReplicas);
  const currentRevision = str(status.currentRevision);
  const updateRevision = str(status.updateRevision);
  const { state, by } = decide(conditions, { replicas, updated, revisionsDiffer: currentRevision !== updateRevision });
  const images = imagesOf(app);
  return {
    namespace,
    name,
    state,
    message: str(by?.message, MAX_MESSAGE),
    replicas,
    updated,
    ready: num(status.readyReplicas),
    currentRevision,
    updateRevision,
    canary: canaryOf(app),
    images: images.slice(0, MAX_IMAGES),
    moreImages: Math.max(0, images.length - MAX_IMAGES),
  };
}
