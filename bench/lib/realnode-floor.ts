/**
 * The real kubelet's floor for one pod, measured directly on a bare pod (no controller) with the rollouts'
 * pod template, seen through the same kind of pod watch as the rollouts:
 *
 *   in place   image patch on the idle pod → the container runs the new image, is ready and the pod Ready
 *   recreate   delete (grace from the pod) → pod gone, then create → Ready (the sum is the sample)
 *   cold pull  CRI PullImage of an image absent from the node (containerd alone, no pod)
 */
import { sleep } from '../../src/common/wait.ts';
import type { CriClient } from '../../src/cri/client.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import { PodTimeline, isReady, type BenchPod } from './pod-timeline.ts';
import { realPodTemplate } from './realnode-workloads.ts';
import { SET_LABEL } from './workloads.ts';
import { abortable } from './realnode-env.ts';

const clock = (): number => performance.timeOrigin + performance.now();
const NAME = 'floor';
/** How long the pod stays idle (Ready) before each sample: the kubelet's own relist settles first. */
const IDLE_MS = 3_000;

export interface FloorSamples {
  inPlaceMs: number[];
  recreateMs: number[];
  /** Of each recreate sample: delete → gone. */
  terminateMs: number[];
}

function runningReady(image: string, minRestarts: number): (pods: BenchPod[]) => boolean {
  return (pods) =>
    pods.some((p) => {
      const cs = p.status?.containerStatuses?.[0];
      return (
        p.metadata.name === NAME && !p.metadata.deletionTimestamp && cs?.image === image && cs.ready && (cs.restartCount ?? 0) >= minRestarts && isReady(p)
      );
    });
}

export class FloorPod {
  private readonly timeline: PodTimeline;
  private image = '';
  private readonly rest: KubeRest;
  private readonly ns: string;
  private readonly graceSeconds: number;
  private readonly signal: AbortSignal;

  constructor(rest: KubeRest, ns: string, graceSeconds: number, signal: AbortSignal) {
    this.rest = rest;
    this.ns = ns;
    this.graceSeconds = graceSeconds;
    this.signal = signal;
    this.timeline = new PodTimeline(rest, ns, `${SET_LABEL}=${NAME}`);
  }

  private until(check: (pods: BenchPod[]) => boolean, what: string): Promise<number> {
    return abortable(this.timeline.until(check, 180_000, `floor pod: ${what}`), this.signal);
  }

  private async create(image: string): Promise<void> {
    const t = realPodTemplate(NAME, image, this.graceSeconds) as { metadata: object; spec: object };
    await this.rest.create(core('pods', this.ns), { apiVersion: 'v1', kind: 'Pod', metadata: { name: NAME, ...t.metadata }, spec: t.spec });
    this.image = image;
  }

  async start(image: string): Promise<void> {
    await this.timeline.start();
    await this.create(image);
    await this.until(runningReady(image, 0), 'Ready');
  }

  /** One in-place sample: patch the image to `image` → running it, ready, pod Ready. */
  async inPlace(image: string): Promise<number> {
    await sleep(IDLE_MS, this.signal);
    const restarts = this.timeline.current()[0]?.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const t0 = clock();
    await this.rest.patch(core('pods', this.ns, NAME), { spec: { containers: [{ name: 'main', image }] } }, PatchType.strategic);
    this.image = image;
    return (await this.until(runningReady(image, restarts + 1), `in place to ${image}`)) - t0;
  }

  /** One recreate sample: delete → gone → create (same image) → Ready; returns [total, delete → gone]. */
  async recreate(): Promise<[number, number]> {
    await sleep(IDLE_MS, this.signal);
    const t0 = clock();
    await this.rest.delete(core('pods', this.ns, NAME));
    const gone = await this.until((pods) => !pods.some((p) => p.metadata.name === NAME), 'gone');
    await this.create(this.image);
    return [(await this.until(runningReady(this.image, 0), 'recreated and Ready')) - t0, gone - t0];
  }

  /** `samples` in-place samples alternating between `images`, then `samples` recreate samples. */
  async measure(images: [string, string], samples: number, into: FloorSamples): Promise<void> {
    for (let i = 0; i < samples; i++) into.inPlaceMs.push(await this.inPlace(this.image === images[0] ? images[1] : images[0]));
    for (let i = 0; i < samples; i++) {
      const [total, terminate] = await this.recreate();
      into.recreateMs.push(total);
      into.terminateMs.push(terminate);
    }
  }

  async stop(): Promise<void> {
    await this.rest.delete(core('pods', this.ns, NAME)).catch(() => undefined);
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
