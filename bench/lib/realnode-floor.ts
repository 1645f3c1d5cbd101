/**
 * The real kubelet's floor for one pod, measured directly on a bare pod (no controller) with the rollouts'
 * pod template, seen through the same kind of pod watch as the rollouts:
 *
 *   in place   image patch on the idle pod → the container runs the new image, is ready and the pod Ready
 *   gated      ebb's former in-place protocol done by hand on a pod with the InPlaceUpdateReady readiness gate:
 *              gate False (pods/status), image patch, container ready → gate True → pod Ready (no controller latency)
 *   early gate ebb's protocol by hand on the same pod: gate False, image patch, the kubelet's status for the
 *              patched spec (status.observedGeneration) → gate True, then the container ready → pod Ready
 *   recreate   delete (grace from the pod) → pod gone, then create → Ready (the sum is the sample)
 *   cold pull  CRI PullImage of an image absent from the node (containerd alone, no pod)
 *
 * Every in-place sample is the first in-place update of a new pod (the pod is deleted and created again,
 * untimed, before it), as each pod of a rollout is updated once. The kubelet holds a container's start under
 * its crash-loop back-off, keyed by pod UID, container and image, whenever an earlier instance of that
 * container has exited, and a restart for a spec change counts: one pod switched between two images again
 * and again waits 10, 20, 40, … s (up to 5 min) for the start of an image it ran before, measured from the exit
 * of the previous instance. That back-off, not the protocol, is what made early-gate samples taken on one pod
 * grow from 2 s to 163 s (each followed a short gated sample, so its previous instance had just exited).
 */
import { sleep } from '../../src/common/wait.ts';
import type { CriClient } from '../../src/cri/client.ts';
import { Annotation, READINESS_GATE_IN_PLACE_UPDATE_READY as GATE } from '../../src/api/keys.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import { PodTimeline, isReady, type BenchPod } from './pod-timeline.ts';
import { realPodTemplate } from './realnode-workloads.ts';
import { SET_LABEL } from './workloads.ts';
import { abortable } from './realnode-env.ts';

const clock = (): number => performance.timeOrigin + performance.now();
/** How long the pod stays idle (Ready) before each sample: the kubelet's own relist settles first. */
const IDLE_MS = 3_000;

export interface FloorSamples {
  inPlaceMs: number[];
  recreateMs: number[];
  /** Of each recreate sample: delete → gone. */
  terminateMs: number[];
  gatedMs: number[];
  /** Of each gated sample: image patch → container ready, and gate True → pod Ready. */
  gatedKubeletMs: number[];
  gatedReadyMs: number[];
  /** Image patch → pod Ready, with the gate True after the container is ready (gated) and once the kubelet has the patch (early). */
  gatedPatchReadyMs: number[];
  earlyPatchReadyMs: number[];
  earlyMs: number[];
}

export const emptySamples = (): FloorSamples => ({
  inPlaceMs: [],
  recreateMs: [],
  terminateMs: [],
  gatedMs: [],
  gatedKubeletMs: [],
  gatedReadyMs: [],
  gatedPatchReadyMs: [],
  earlyPatchReadyMs: [],
  earlyMs: [],
});

/** The container runs `image`, is ready and restarted at least `minRestarts` times; with `podReady`, the pod is Ready too. */
function running(name: string, image: string, minRestarts: number, podReady = true): (pods: BenchPod[]) => boolean {
  return (pods) =>
    pods.some((p) => {
      const cs = p.status?.containerStatuses?.[0];
      const ok = p.metadata.name === name && !p.metadata.deletionTimestamp && cs?.image === image && cs.ready && (cs.restartCount ?? 0) >= minRestarts;
      return ok && (!podReady || isReady(p));
    });
}

export class FloorPod {
  private readonly timeline: PodTimeline;
  private image = '';
  private readonly rest: KubeRest;
  private readonly ns: string;
  private readonly graceSeconds: number;
  private readonly signal: AbortSignal;
  private readonly name: string;
  private readonly gated: boolean;

  /** A bare pod `name`; `gated`: with the InPlaceUpdateReady readiness gate, set True once created. */
  constructor(rest: KubeRest, ns: string, opts: { name: string; gated: boolean; graceSeconds: number; signal: AbortSignal }) {
    this.rest = rest;
    this.ns = ns;
    this.name = opts.name;
    this.gated = opts.gated;
    this.graceSeconds = opts.graceSeconds;
    this.signal = opts.signal;
    this.timeline = new PodTimeline(rest, ns, `${SET_LABEL}=${opts.name}`);
  }

  private until(check: (pods: BenchPod[]) => boolean, what: string): Promise<number> {
    return abortable(this.timeline.until(check, 180_000, `floor pod: ${what}`), this.signal);
  }

  private async create(image: string): Promise<void> {
    const t = realPodTemplate(this.name, image, this.graceSeconds) as { metadata: object; spec: object };
    const spec = this.gated ? { ...t.spec, readinessGates: [{ conditionType: GATE }] } : t.spec;
    await this.rest.create(core('pods', this.ns), { apiVersion: 'v1', kind: 'Pod', metadata: { name: this.name, ...t.metadata }, spec });
    this.image = image;
    if (this.gated) {
      await this.until(running(this.name, image, 0, false), 'container ready');
      await this.gate('True');
    }
  }

  /** Sets the gate condition through pods/status as ebb does: in one patch with its state annotation (set on False, removed on True). */
  private async gate(status: 'True' | 'False'): Promise<void> {
    const condition = { type: GATE, status, lastTransitionTime: new Date().toISOString() };
    const metadata = { annotations: { [Annotation.inPlaceUpdateState]: status === 'False' ? JSON.stringify({ bench: Date.now() }) : null } };
    await this.rest.patch(core('pods', this.ns, this.name, 'status'), { metadata, status: { conditions: [condition] } }, PatchType.strategic);
  }

  async start(image: string): Promise<void> {
    await this.timeline.start();
    await this.create(image);
    await this.until(running(this.name, image, 0), 'Ready');
  }

  /** A new pod of the same name on the current image (untimed): the next in-place update is its first. */
  private async renew(): Promise<void> {
    await this.rest.delete(core('pods', this.ns, this.name));
    await this.until((pods) => !pods.some((p) => p.metadata.name === this.name), 'gone before a new pod');
    await this.create(this.image);
    await this.until(running(this.name, this.image, 0), 'new pod Ready');
  }

  /** Before an in-place sample: a new pod (so no earlier instance has exited), idle for IDLE_MS; its restart count. */
  private async freshIdle(): Promise<number> {
    await this.renew();
    await sleep(IDLE_MS, this.signal);
    return this.timeline.current()[0]?.status?.containerStatuses?.[0]?.restartCount ?? 0;
  }

  /** One in-place sample: patch the image to `image` → running it, ready, pod Ready. */
  async inPlace(image: string): Promise<number> {
    const restarts = await this.freshIdle();
    const t0 = clock();
    await this.rest.patch(core('pods', this.ns, this.name), { spec: { containers: [{ name: 'main', image }] } }, PatchType.strategic);
    this.image = image;
    return (await this.until(running(this.name, image, restarts + 1), `in place to ${image}`)) - t0;
  }

  /** One early-gate sample: gate False, image patch, the kubelet observed it → gate True, pod Ready; [total, patch → Ready]. */
  async earlyGateInPlace(image: string): Promise<[number, number]> {
    const restarts = await this.freshIdle();
    const t0 = clock();
    await this.gate('False');
    const patched = clock();
    const pod = await this.rest.patch<BenchPod>(core('pods', this.ns, this.name), { spec: { containers: [{ name: 'main', image }] } }, PatchType.strategic);
    this.image = image;
    const generation = pod.metadata.generation ?? Infinity;
    await this.until((pods) => pods.some((p) => p.metadata.name === this.name && (p.status?.observedGeneration ?? 0) >= generation), 'patch observed');
    await this.gate('True');
    const podReady = await this.until(running(this.name, image, restarts + 1), 'Ready after the early gate');
    return [podReady - t0, podReady - patched];
  }

  /** One gated sample: gate False, image patch, container ready, gate True, pod Ready; [total, patch → container ready, gate True → Ready, patch → Ready]. */
  async gatedInPlace(image: string): Promise<[number, number, number, number]> {
    const restarts = await this.freshIdle();
    const t0 = clock();
    await this.gate('False');
    const patched = clock();
    await this.rest.patch(core('pods', this.ns, this.name), { spec: { containers: [{ name: 'main', image }] } }, PatchType.strategic);
    this.image = image;
    const ready = await this.until(running(this.name, image, restarts + 1, false), `gated in place to ${image}`);
    const gateTrue = clock();
    await this.gate('True');
    const podReady = await this.until(running(this.name, image, restarts + 1), 'Ready after gate True');
    return [podReady - t0, ready - patched, podReady - gateTrue, podReady - patched];
  }

  /** One recreate sample: delete → gone → create (same image) → Ready; returns [total, delete → gone]. */
  async recreate(): Promise<[number, number]> {
    await sleep(IDLE_MS, this.signal);
    const t0 = clock();
    await this.rest.delete(core('pods', this.ns, this.name));
    const gone = await this.until((pods) => !pods.some((p) => p.metadata.name === this.name), 'gone');
    await this.create(this.image);
    return [(await this.until(running(this.name, this.image, 0), 'recreated and Ready')) - t0, gone - t0];
  }

  /** Gated pod: `samples` gated and early-gate samples each; otherwise in-place then recreate samples; images alternate between `images`. */
  async measure(images: [string, string], samples: number, into: FloorSamples): Promise<void> {
    const next = (): string => (this.image === images[0] ? images[1] : images[0]);
    if (this.gated) {
      for (let i = 0; i < samples; i++) {
        const [total, kubelet, ready, patchReady] = await this.gatedInPlace(next());
        into.gatedMs.push(total);
        into.gatedKubeletMs.push(kubelet);
        into.gatedReadyMs.push(ready);
        into.gatedPatchReadyMs.push(patchReady);
        const [early, earlyPatchReady] = await this.earlyGateInPlace(next());
        into.earlyMs.push(early);
        into.earlyPatchReadyMs.push(earlyPatchReady);
      }
      return;
    }
    for (let i = 0; i < samples; i++) into.inPlaceMs.push(await this.inPlace(next()));
    for (let i = 0; i < samples; i++) {
      const [total, terminate] = await this.recreate();
      into.recreateMs.push(total);
      into.terminateMs.push(terminate);
    }
  }

  async stop(): Promise<void> {
    await this.rest.delete(core('pods', this.ns, this.name)).catch(() => undefined);
    await this.timeline.stop();
  }
}

/** CRI PullImage of `image` (absent: removed first), timed; removed again afterwards. */
export async function coldPull(cri: CriClient, image: string, signal: AbortSignal): Promise<number> {
  await cri.removeImage(image, { signal });
  const t0 = clock();
  await cri.pullImage(image, { signal });
  const ms = clock() - t0;
  await cri.removeImage(image, { signal });
  return ms;
}
