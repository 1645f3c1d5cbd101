/**
 * One pod's worker on a simulated node: post status when it changed, plan the next step, execute it,
 * repeat; sleep when there is nothing to do until a deadline or a pod update. A deletion cancels the step in
 * progress (as the kubelet cancels a sync when a pod is killed) and leads to the termination step.
 */
import { backoffMs } from '../../../src/common/backoff.ts';
import { sleep } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { startContainer, graceMs } from './container-start.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import type { NodeContext } from './node-context.ts';
import { nextStep, type Step } from './plan.ts';
import { buildPodStatus, KUBELET_CONDITIONS, type KubeletPodStatus } from './pod-status.ts';
import { applyInstantStep } from './transition.ts';
import { newPodRuntime, withAllStopped, type PodRuntime } from './runtime.ts';
import { backOffEvents } from './status-events.ts';
import { coreProjection, statusPatch } from './status-patch.ts';
import { scaled } from './timings.ts';
import { advanceGateView, gateDueAt, initialGateView, withGateView, type GateView } from './gate-view.ts';
import { errorMessage } from '../../../src/common/errors.ts';

/** How often the kubelet re-checks a PVC that is not Bound yet. */
const CLAIM_POLL_MS = 250;
/** The longest a worker sleeps without re-planning (a resync, as the kubelet's periodic pod sync). */
const RESYNC_MS = 10_000;

export class PodWorker {
  readonly uid: string;
  private pod: Stored<Pod>;
  private rt: PodRuntime;
  private readonly ctx: NodeContext;
  /** Ends the worker: node stopped, or the pod is gone from the apiserver. */
  private readonly life = new AbortController();
  private step = new AbortController();
  private wake: (() => void) | undefined;
  private lastKey: string | undefined;
  private lastWritten: KubeletPodStatus | undefined;
  private writtenRv: string | undefined;
  private seenOwnWrite = false;
  private failures = 0;
  /** The readiness gates as Ready sees them (a gate's change reaches Ready `readinessGateMs` later). */
  private gates: GateView;
  /** The pod changed since the status was last computed (so a wait must not start). */
  private changed = false;
  /**
   * The next status comes from a pod sync the kubelet makes for a cause of its own (the spec changed, or a step
   * changed the containers), which reads the gates as they are (`gate-view.ts`).
   */
  private syncDue = false;
  /** Resolves when the worker has stopped. */
  readonly done: Promise<void>;
  /** Set once the pod was terminated and deleted by this worker. */
  finished = false;

  constructor(pod: Stored<Pod>, ctx: NodeContext, nodeSignal: AbortSignal, runtime?: PodRuntime) {
    this.uid = pod.metadata.uid;
    this.pod = pod;
    this.ctx = ctx;
    this.rt = runtime ?? newPodRuntime(pod.metadata.uid, ctx.now());
    this.gates = initialGateView(pod);
    const stop = (): void => this.life.abort();
    nodeSignal.addEventListener('abort', stop, { once: true });
    this.done = this.run().finally(() => nodeSignal.removeEventListener('abort', stop));
  }

  /** The runtime state (for the node's resource bookkeeping). */
  get runtime(): PodRuntime {
    return this.rt;
  }

  /** A newer version of the pod from the watch. */
  update(pod: Stored<Pod>): void {
    const wasDeleting = this.pod.metadata.deletionTimestamp !== undefined;
    if (pod.metadata.generation !== this.pod.metadata.generation) this.syncDue = true;
    this.pod = pod;
    this.changed = true;
    if (pod.metadata.resourceVersion !== undefined && pod.metadata.resourceVersion === this.writtenRv) this.seenOwnWrite = true;
    if (pod.metadata.deletionTimestamp !== undefined && !wasDeleting) this.step.abort();
    this.kick();
  }

  /** The pod is gone from the apiserver (or the node stops): stop without writing anything. */
  stop(): void {
    this.life.abort();
    this.kick();
  }

  private kick(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async run(): Promise<void> {
    while (!this.life.signal.aborted && !this.finished) {
      if (this.step.signal.aborted) this.step = new AbortController();
      try {
        await this.postStatus();
        const step = nextStep({ pod: this.pod, runtime: this.rt, now: this.ctx.now(), timings: this.ctx.timings(), node: this.ctx.capacity(this.uid) });
        if (step.kind === 'wait') await this.idle(earliest(step.untilMs, gateDueAt(this.gates, this.ctx.timings().readinessGateMs)));
        else {
          await this.execute(step);
          this.syncDue = true;
        }
        this.failures = 0;
      } catch (err) {
        if (this.life.signal.aborted) break;
        if (this.step.signal.aborted) continue;
        await this.onError(err);
      }
    }
    this.ctx.ips.release(this.uid);
  }

  private async onError(err: unknown): Promise<void> {
    if (isKubeError(err, 'NotFound', 'Conflict', 'Invalid')) {
      // A status patch with our UID precondition failed: the pod may be gone or recreated under its name.
      const live = await this.ctx.api.getPod(this.pod.metadata.namespace, this.pod.metadata.name, this.life.signal).catch(() => this.pod);
      if (!live || live.metadata.uid !== this.uid) {
        this.life.abort();
        return;
      }
      this.update(live);
      this.lastKey = undefined;
    }
    this.failures++;
    const error = errorMessage(err);
    this.ctx.log.warn({ pod: this.pod.metadata.name, namespace: this.pod.metadata.namespace, error, attempt: this.failures }, 'pod sync failed; retrying');
    await sleep(backoffMs(this.failures, 200, 5_000), this.life.signal).catch(() => undefined);
  }

  /** Sleeps until `untilMs`, a pod update, or the end of the worker. */
  private idle(untilMs: number | undefined): Promise<void> {
    if (this.changed) return Promise.resolve();
    return new Promise((resolve) => {
      const ms = untilMs === undefined ? RESYNC_MS : Math.min(RESYNC_MS, Math.max(0, untilMs - this.ctx.now()) + 1);
      const done = (): void => {
        clearTimeout(timer);
        this.life.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      this.life.signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Posts the kubelet's status when it differs from what was last posted, or when someone overwrote it. */
  private async postStatus(): Promise<void> {
    this.changed = false;
    const synced = this.syncDue;
    this.syncDue = false;
    this.gates = advanceGateView(this.gates, this.pod, this.ctx.now(), this.ctx.timings().readinessGateMs, synced);
    const desired = buildPodStatus({
      pod: withGateView(this.pod, this.gates),
      runtime: this.rt,
      now: this.ctx.now(),
      hostIP: this.ctx.hostIP,
      timings: this.ctx.timings(),
      previous: this.lastWritten?.conditions,
    });
    const key = JSON.stringify(desired);
    if (key === this.lastKey) {
      const drifted = this.seenOwnWrite && coreProjection(this.pod.status, KUBELET_CONDITIONS) !== coreProjection(desired, KUBELET_CONDITIONS);
      if (!drifted) return;
    }
    const rv = await this.ctx.api.patchStatus(this.pod, statusPatch(this.uid, desired, this.pod.status), this.life.signal);
    for (const e of backOffEvents(this.pod, this.lastWritten, desired)) this.ctx.events.record(this.pod, e);
    this.lastKey = key;
    this.lastWritten = desired;
    this.writtenRv = rv;
    // The watch may have delivered our write before the response arrived.
    this.seenOwnWrite = rv !== undefined && this.pod.metadata.resourceVersion === rv;
  }

  private async execute(step: Exclude<Step, { kind: 'wait' }>): Promise<void> {
    const signal = AbortSignal.any([this.life.signal, this.step.signal]);
    const faults = this.ctx.faults();
    const timings = this.ctx.timings();
    switch (step.kind) {
      case 'terminate':
        return this.terminate();
      case 'mountVolumes':
        await this.waitForClaims(step.claims, signal);
        if (step.claims.length > 0) await this.ctx.delay(scaled(timings.volumeAttachMs, faults), signal);
        break;
      case 'createSandbox':
        await this.ctx.delay(scaled(timings.sandboxMs, faults), signal);
        break;
      case 'startContainer':
        this.rt = await startContainer(this.pod, this.rt, step, this.ctx, signal);
        return;
      case 'actuateResize':
        await this.ctx.delay(scaled(timings.resizeMs, faults), signal);
        break;
      default:
        break;
    }
    this.rt = applyInstantStep(this.rt, step, this.ctx.now(), () => this.ctx.ips.allocate(this.uid));
  }

  private async waitForClaims(claims: string[], signal: AbortSignal): Promise<void> {
    const ns = this.pod.metadata.namespace;
    for (const claim of claims) {
      while ((await this.ctx.api.claimPhase(ns, claim, signal)) !== 'Bound') await sleep(CLAIM_POLL_MS, signal);
    }
  }

  /** Stops the containers (charging the grace period), posts the terminal status, deletes the pod. */
  private async terminate(): Promise<void> {
    if (!this.rt.terminated) {
      const running = Object.values(this.rt.containers).filter((c) => c.phase.kind === 'running');
      for (const c of running) {
        const init = this.pod.spec.initContainers?.some((x) => x.name === c.name) === true;
        this.ctx.events.record(this.pod, {
          type: 'Normal',
          reason: 'Killing',
          message: `Stopping container ${c.name}`,
          fieldPath: init ? `spec.initContainers{${c.name}}` : `spec.containers{${c.name}}`,
        });
      }
      if (running.length > 0) await this.ctx.delay(graceMs(this.pod, this.ctx, true), this.life.signal);
      this.rt = withAllStopped(this.rt, this.ctx.now());
      await this.ctx.delay(scaled(this.ctx.timings().teardownMs, this.ctx.faults()), this.life.signal);
    }
    await this.postStatus();
    await this.ctx.api.deletePod(this.pod, this.life.signal);
    this.finished = true;
  }
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
