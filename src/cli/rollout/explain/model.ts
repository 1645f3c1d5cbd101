/**
 * What `ebb rollout explain` reads (`ExplainInput`) and what it answers (`Explanation`, also its
 * `--output json`): why the rollout waits, pod by pod, and what ebb does next and when. Every field of the
 * answer is derived, by pure functions, from the App, its pods, the ImageLists of its nodes, a plan made
 * read-only from them, and what the queues hold of the App (its last reconcile's summary, its timers).
 */
import type { App } from '../../../api/app.ts';
import type { ImageList } from '../../../api/image-list.ts';
import type { Pod } from '../../../kube/types.ts';
import type { Action } from '../../../workers/app/model/actions.ts';
import type { Wait } from '../../../workers/types.ts';
import type { RolloutState } from '../view.ts';

/** The last reconcile job of the App, as the queue keeps it. */
export interface LastReconcile {
  jobId: string;
  /** When it finished (epoch ms). */
  finishedAt: number | undefined;
  /** The job failed (after its retries, or still retrying): `failedReason` says why. */
  failed: boolean;
  failedReason?: string | undefined;
  /** The job's return value: `{result, ms, ...the reconcile summary}` (src/workers/app/summary.ts). */
  returnValue?: Readonly<Record<string, unknown>> | undefined;
  /** The job's log lines. */
  logs: readonly string[];
}

/** What the queues hold of one App. */
export interface QueueFacts {
  last?: LastReconcile | undefined;
  /** A reconcile waiting to start or running now. */
  pending?: { jobId: string; state: string; enqueuedAt: number | undefined } | undefined;
  /** Delayed timer jobs of the App: each enqueues a reconcile when due. */
  timers: readonly { reason: string; dueAt: number }[];
}

export interface ExplainInput {
  app: App;
  pods: readonly Pod[];
  /** The ImageLists holding the App's pre-warm entries; undefined when they could not be read. */
  imageLists: readonly ImageList[] | undefined;
  /** The plan as a reconcile would make it now (no dry run, nothing written); undefined when not made. */
  plan: { actions: readonly Action[]; wait?: Wait | undefined } | undefined;
  /** Undefined when the queues could not be read (a note says why). */
  queue: QueueFacts | undefined;
  /** Why a source is missing, said as it is. */
  notes: readonly string[];
  now: Date;
}

/** One thing something waits for. `until`: when it ends by itself (ISO time), if known. */
export interface WaitItem {
  kind: string;
  message: string;
  until?: string | undefined;
}

export interface PodExplanation {
  name: string;
  /** `update`, `current`, or another revision's name. */
  revision: string;
  node: string | undefined;
  ready: boolean;
  /** What keeps this pod from being done with the rollout (empty: nothing). */
  waits: WaitItem[];
  /** What the plan made now would do to it. */
  next: string[];
}

export type NodePullState = 'Pulled' | 'Pulling' | 'Pending' | 'Failed' | 'Deferred' | 'NotRequested';

export interface NodePrewarm {
  node: string;
  state: NodePullState;
  /** Of the update revision's images, how many the node reports pulled. */
  pulled: number;
  images: { image: string; phase: string; attempts?: number | undefined; message?: string | undefined; lastPullTime?: string | undefined }[];
  /** The App's pods on this node still to update. */
  pods: string[];
}

export interface PrewarmExplanation {
  images: string[];
  nodesRequested: number;
  nodesPulled: number;
  nodesFailed: number;
  nodes: NodePrewarm[];
}

export interface NextStep {
  /** ISO time; undefined: now (or as soon as a worker takes the job). */
  at?: string | undefined;
  what: string;
  /** `plan` (made read-only now), `timer` (a delayed job), `queue` (a job waiting or running), `status` (a pause only a person ends). */
  source: 'plan' | 'timer' | 'queue' | 'status';
}

export interface Explanation {
  /** When this was computed (ISO time). */
  at: string;
  app: { namespace: string; name: string; generation: number; observedGeneration: number };
  state: RolloutState;
  /** The status line of `ebb rollout status`. */
  line: string;
  phase: string;
  revisions: { current?: string | undefined; update?: string | undefined };
  strategy: { type: string; podUpdatePolicy: string; partition: number; paused: boolean };
  /** What the rollout as a whole waits for. */
  waits: WaitItem[];
  pods: PodExplanation[];
  prewarm?: PrewarmExplanation | undefined;
  next: NextStep[];
  lastReconcile?: LastReconcile | undefined;
  notes: string[];
}
