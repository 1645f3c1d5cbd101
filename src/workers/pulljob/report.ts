/**
 * What an ImagePullJob's plan reports (pure): the failed nodes listed in its status, the Events for new
 * failures, and its condition Complete, from what the plan observed.
 */
import { MAX_FAILED_NODES_LISTED, type FailedNode, type ImagePullJobStatus } from '../../api/image-pull-job.ts';
import { PullJobCondition, PullJobEventReason, PullJobReason } from '../../api/pull-job-keys.ts';
import type { ClusterStored } from '../../kube/types.ts';
import type { ImageList } from '../../api/image-list.ts';
import { refusedNote, type Limited } from '../shared/pull-grant.ts';
import type { NodeState } from '../shared/pull-state.ts';
import type { ConditionInput } from '../shared/conditions.ts';

/** An Event about the job. */
export interface PullJobEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

const MESSAGE_NODES = 3;

const nodeList = (nodes: readonly string[]): string =>
  nodes.length <= MESSAGE_NODES ? nodes.join(', ') : `${nodes.slice(0, MESSAGE_NODES).join(', ')} and ${nodes.length - MESSAGE_NODES} more`;

/** The failed nodes and why, by name (the first MAX_FAILED_NODES_LISTED). */
export function failedNodes(states: ReadonlyMap<string, NodeState>): FailedNode[] {
  const failed = [...states].flatMap(([node, s]) => (s.state === 'failed' ? [{ node, message: s.message }] : []));
  return failed.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)).slice(0, MAX_FAILED_NODES_LISTED);
}

/** Events for nodes that failed since the last status (at most a few, the count in the message). */
export function failureEvents(before: ImagePullJobStatus | undefined, now: readonly FailedNode[]): PullJobEvent[] {
  const known = new Set((before?.failedNodes ?? []).map((f) => f.node));
  const fresh = now.filter((f) => !known.has(f.node));
  return fresh.slice(0, MESSAGE_NODES).map((f) => ({ type: 'Warning', reason: PullJobEventReason.nodeFailed, message: `node ${f.node}: ${f.message}` }));
}

/** What was observed of a job that is not finished: its nodes, their states and the status counted from them. */
export interface Observed {
  selected: string[];
  states: Map<string, NodeState>;
  stale: ClusterStored<ImageList>[];
  fails: FailedNode[];
  base: ImagePullJobStatus;
  deadlineAt: number | undefined;
}

/** `; N nodes left out: …` when the selector picks nodes whose taints the job does not tolerate, else ''. */
function untoleratedNote(o: Observed): string {
  const left = o.base.untolerated ?? 0;
  if (left === 0) return '';
  return `; ${left} ${left === 1 ? 'node' : 'nodes'} left out: a NoSchedule or NoExecute taint the job does not tolerate`;
}

/** Condition Complete True for a job whose every selected node is done (or that selects none). */
export function completion(o: Observed): ConditionInput & { failed: boolean } {
  const failed = o.fails.length > 0;
  const n = o.selected.length;
  const reason = n === 0 ? PullJobReason.noNodes : failed ? PullJobReason.someFailed : PullJobReason.allPulled;
  const failures = failed ? `; failed on ${nodeList(o.fails.map((f) => f.node))}` : '';
  const message =
    n === 0 ? `no node matches the nodeSelector${untoleratedNote(o)}` : `${o.base.succeeded} of ${n} nodes pulled the images${failures}${untoleratedNote(o)}`;
  return { type: PullJobCondition.complete, status: 'True', reason, message, failed };
}

/** Condition Complete False while nodes are pulling or waiting (always, with completionPolicy Never). */
export function progressCondition(
  o: Observed,
  counts: { active: number; waiting: number; deferred: number },
  never: boolean,
  limited: Limited | undefined,
): ConditionInput {
  const { active, waiting, deferred } = counts;
  const held = deferred > 0 ? ` (${deferred} deferred by their daemon: image filesystem too full)` : '';
  const refused = refusedNote(limited);
  const progress = `${o.base.succeeded} of ${o.selected.length} nodes pulled the images, ${active} pulling${held}, ${waiting} waiting${refused}${untoleratedNote(o)}`;
  if (!never) return { type: PullJobCondition.complete, status: 'False', reason: PullJobReason.inProgress, message: progress };
  return {
    type: PullJobCondition.complete,
    status: 'False',
    reason: PullJobReason.neverCompletes,
    message: `completionPolicy Never: ${progress}; nodes that join are warmed too`,
  };
}
