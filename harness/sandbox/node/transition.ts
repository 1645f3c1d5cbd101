/**
 * The runtime change of the kubelet steps that need no I/O of their own: what both the sandbox kubelet (after
 * any delay it charges) and the in-memory kubelet of the unit tests apply, so the two cannot drift apart.
 */
import type { Step } from './plan.ts';
import { withContainerExited, withResizeActuated, withResizeAllocated, withResizePending, withSandbox, withVolumesReady, type PodRuntime } from './runtime.ts';

/** The steps this covers: every step but starting a container and terminating the pod, which do I/O. */
export type InstantStep = Exclude<Step, { kind: 'wait' | 'startContainer' | 'terminate' }>;

/** The runtime after `step` at `now`; `podIP` is asked for only when the step creates the pod sandbox. */
export function applyInstantStep(rt: PodRuntime, step: InstantStep, now: number, podIP: () => string): PodRuntime {
  switch (step.kind) {
    case 'mountVolumes':
      return withVolumesReady(rt, now);
    case 'createSandbox':
      return withSandbox(rt, podIP(), now);
    case 'containerExited':
      return withContainerExited(rt, step.container, {
        exitCode: step.exitCode,
        reason: step.exitCode === 0 ? 'Completed' : 'Error',
        now,
        crashed: step.exitCode !== 0,
      });
    case 'allocateResize':
      return withResizeAllocated(rt, step.container, step.resources);
    case 'actuateResize':
      return withResizeActuated(rt, step.container);
    case 'resizePending':
      return withResizePending(rt, step.verdict);
  }
}
