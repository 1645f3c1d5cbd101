/**
 * Executes the `startContainer` step like the kubelet's startContainer: stop the running instance when it
 * is being replaced, make sure the image is present (pull policy, pull back-off and faults), create and start
 * the container, with kubelet-like Events at each stage.
 */
import { formatImageReference, parseImageReference } from '../../../src/api/image-ref.ts';
import { newContainerId } from './addresses.ts';
import { PullError, type StoredImage } from './image-store.ts';
import type { Container, Pod, Stored } from '../../../src/kube/types.ts';
import { abandonOnAbort, type NodeContext } from './node-context.ts';
import type { PodEvent } from './pod-api.ts';
import type { RestartCause, Step } from './plan.ts';
import { crashes, effectivePullPolicy, goDuration, imageMatches, shouldPullImage, type ContainerKind } from './policy.ts';
import { withContainerExited, withContainerStarted, withPullFailed, withPullSucceeded, type PodRuntime } from './runtime.ts';
import { scaled } from './timings.ts';
import { errorMessage } from '../../../src/common/errors.ts';

type StartStep = Extract<Step, { kind: 'startContainer' }>;

/** Default terminationGracePeriodSeconds. */
const DEFAULT_GRACE_SECONDS = 30;

export function fieldPath(kind: ContainerKind, name: string): string {
  return kind === 'regular' ? `spec.containers{${name}}` : `spec.initContainers{${name}}`;
}

/**
 * Milliseconds charged to stop a container: the app's share (the pod's grace period, capped by the node's
 * timings) and the kubelet's own (`stopMs`, after the slow-node fault).
 */
export function graceMs(pod: Stored<Pod>, ctx: NodeContext, deleting: boolean): number {
  const seconds = (deleting ? pod.metadata.deletionGracePeriodSeconds : undefined) ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  const timings = ctx.timings();
  return Math.max(0, Math.min(seconds * 1000, timings.terminationGraceCapMs)) + scaled(timings.stopMs, ctx.faults());
}

function killMessage(name: string, cause: RestartCause): string {
  return cause === 'definitionChanged' ? `Container ${name} definition changed, will be restarted` : `Container ${name} resize requires restart`;
}

type Ensured = { ok: true; image: StoredImage } | { ok: false; rt: PodRuntime };

function pullFailureMessage(image: string, err: unknown): { reason: 'ErrImagePull' | 'InvalidImageName'; message: string } {
  if (err instanceof PullError && err.reason === 'InvalidImageName') {
    return {
      reason: 'InvalidImageName',
      message: `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`,
    };
  }
  const parsed = parseImageReference(image);
  const ref = parsed.ok ? formatImageReference(parsed.ref) : image;
  const detail = errorMessage(err);
  return { reason: 'ErrImagePull', message: `rpc error: code = Unknown desc = failed to pull and unpack image "${ref}": ${detail}` };
}

/** Upstream EnsureImageExists: pull policy, the node's store, faults; failures become a pull failure on the runtime. */
async function ensureImage(pod: Stored<Pod>, rt: PodRuntime, step: StartStep, ctx: NodeContext, signal: AbortSignal): Promise<Ensured> {
  const c: Container = step.container;
  const event = (e: PodEvent): void => ctx.events.record(pod, { ...e, fieldPath: fieldPath(step.containerKind, c.name) });
  const fail = (reason: 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName', message: string): Ensured => ({
    ok: false,
    rt: withPullFailed(rt, c.name, { image: c.image, reason, message, at: ctx.now() }, step.resources),
  });
  const present = ctx.store.status(c.image);
  const policy = effectivePullPolicy(c);
  if (!shouldPullImage(policy, present !== undefined)) {
    if (present) {
      event({ type: 'Normal', reason: 'Pulled', message: `Container image "${c.image}" already present on machine` });
      return { ok: true, image: present };
    }
    const message = `Container image "${c.image}" is not present with pull policy of Never`;
    event({ type: 'Warning', reason: 'ErrImageNeverPull', message });
    return fail('ErrImageNeverPull', message);
  }
  event({ type: 'Normal', reason: 'Pulling', message: `Pulling image "${c.image}"` });
  const t0 = ctx.now();
  try {
    const image = await ctx.pullSlot(async () => {
      const waited = ctx.now() - t0;
      if (imageMatches(c.image, ctx.faults().failPullImages)) throw new PullError('ErrImagePull', 'simulated node fault: pull failed');
      const t1 = ctx.now();
      const img = await abandonOnAbort(ctx.store.pull(c.image, ctx.lifetime), signal);
      const took = goDuration(ctx.now() - t1);
      const total = goDuration(ctx.now() - t1 + waited);
      event({
        type: 'Normal',
        reason: 'Pulled',
        message: `Successfully pulled image "${c.image}" in ${took} (${total} including waiting). Image size: ${img.size} bytes.`,
      });
      return img;
    });
    return { ok: true, image };
  } catch (err) {
    if (signal.aborted || !(err instanceof PullError)) throw err;
    const f = pullFailureMessage(c.image, err);
    event({ type: 'Warning', reason: 'Failed', message: `Failed to pull image "${c.image}": ${f.message}` });
    event({ type: 'Warning', reason: 'Failed', message: `Error: ${f.reason}` });
    return fail(f.reason, f.message);
  }
}

/** Stops the running instance, ensures the image, starts a new instance. Returns the new runtime state. */
export async function startContainer(pod: Stored<Pod>, rt0: PodRuntime, step: StartStep, ctx: NodeContext, signal: AbortSignal): Promise<PodRuntime> {
  const c = step.container;
  const path = fieldPath(step.containerKind, c.name);
  let rt = rt0;
  if (step.restart && rt.containers[c.name]?.phase.kind === 'running') {
    ctx.events.record(pod, { type: 'Normal', reason: 'Killing', message: killMessage(c.name, step.restart), fieldPath: path });
    await ctx.delay(graceMs(pod, ctx, false), signal);
    rt = withContainerExited(rt, c.name, { exitCode: 0, reason: 'Completed', now: ctx.now(), crashed: false });
  }
  const ensured = await ensureImage(pod, rt, step, ctx, signal);
  if (!ensured.ok) return ensured.rt;
  rt = withPullSucceeded(rt, c.name);
  const faults = ctx.faults();
  const timings = ctx.timings();
  await ctx.delay(scaled(timings.startMs, faults), signal);
  ctx.events.record(pod, { type: 'Normal', reason: 'Created', message: `Created container: ${c.name}`, fieldPath: path });
  ctx.events.record(pod, { type: 'Normal', reason: 'Started', message: `Started container ${c.name}`, fieldPath: path });
  const crash = crashes(c.image, faults) ? { afterMs: faults.crashAfterMs, exitCode: faults.crashExitCode } : undefined;
  const initExit = step.containerKind === 'init' ? { afterMs: scaled(timings.initRunMs, faults), exitCode: 0 } : undefined;
  const exit = crash ?? initExit;
  const probeMs = scaled(timings.readyMs, faults);
  return withContainerStarted(rt, {
    name: c.name,
    image: c.image,
    imageRef: ensured.image.repoDigests[0] ?? ensured.image.id,
    containerId: newContainerId(),
    now: ctx.now(),
    startupMs: c.startupProbe ? probeMs : 0,
    readinessMs: c.readinessProbe && step.containerKind !== 'init' ? probeMs : 0,
    ...(exit ? { exit } : {}),
    resources: step.resources,
  });
}
