/**
 * A resize the runtime cannot actuate, as the real kubelet (1.34 with containerd 1.6) reports it: lowering a
 * container's memory limit after the container was restarted in place fails. The kubelet reads the
 * container's memory usage before it lowers the limit; containerd still lists the exited previous instance,
 * with empty stats, so the usage is missing and the decrease is rejected. The pod keeps
 * `PodResizeInProgress=True` with reason `Error` and the cgroup keeps the old limit. A fresh container (one
 * instance so far) is resized normally; cpu changes and memory increases are never refused.
 */
import { milli } from './quantity.ts';
import type { ContainerRuntime } from './runtime.ts';

/** The condition reason the kubelet sets on PodResizeInProgress when actuation fails. */
export const RESIZE_ERROR_REASON = 'Error';

/** The kubelet's message when actuating the allocated resources of `cr` fails, or undefined when it works. */
export function resizeActuationError(cr: ContainerRuntime): string | undefined {
  if (cr.created <= 1 || cr.phase.kind !== 'running') return undefined;
  const from = cr.actual.limits?.memory;
  const to = cr.allocated.limits?.memory;
  if (from === undefined || to === undefined || milli(to) >= milli(from)) return undefined;
  return `cannot decrease memory limits: missing container "${cr.name}" memory usage`;
}
