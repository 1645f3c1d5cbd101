/**
 * Per-pod step times of an in-place rollout, from one pod watch: for every pod name, when the watch first saw
 * (after the template change) the gate InPlaceUpdateReady False, the new image in the spec, the container
 * running the new image and ready (kubelet), the gate True again, and the pod Ready with the new container
 * ready; also whether it was seen Ready on the new spec while the gate was False, and a gate held False again.
 * The pod UID is recorded too, to check nothing was recreated.
 */
import { listWatch } from '../../src/kube/watch.ts';
import { core } from '../../src/kube/paths.ts';
import type { KubeRest } from '../../src/kube/rest.ts';
import type { Pod, Stored } from '../../src/kube/types.ts';
import { READINESS_GATE_IN_PLACE_UPDATE_READY, Reason } from '../../src/api/keys.ts';

type StepPod = Stored<Pod>;

export interface PodSteps {
  name: string;
  uid: string;
  node: string | undefined;
  gateFalse?: number;
  specImage?: number;
  containerReady?: number;
  gateTrue?: number;
  ready?: number;
  restartCount?: number;
  /** Seen Ready with the new image in the spec while the gate was still False (a kubelet that has not yet recomputed Ready). */
  readyWhileGateFalse?: number;
  /** The gate set False again after its early release (reason InPlaceGateHeld: ebb saw the pod Ready on an old container). */
  gateHeld?: number;
}

const cond = (p: StepPod, type: string): string | undefined => p.status?.conditions?.find((c) => c.type === type)?.status;
const reasonOf = (p: StepPod, type: string): string | undefined => p.status?.conditions?.find((c) => c.type === type)?.reason;

export class StepRecorder {
  private readonly ac = new AbortController();
  private running: Promise<void> | undefined;
  private target: { image: string; t0: number; pods: Map<string, PodSteps>; uids: Map<string, string> } | undefined;
  private readonly rest: KubeRest;
  private readonly namespace: string;
  private readonly selector: string;
  private readonly clock = (): number => performance.timeOrigin + performance.now();

  constructor(rest: KubeRest, namespace: string, selector: string) {
    this.rest = rest;
    this.namespace = namespace;
    this.selector = selector;
  }

  async start(): Promise<void> {
    let listed!: () => void;
    const p = new Promise<void>((r) => (listed = r));
    this.running = listWatch<StepPod>(
      { rest: this.rest, ref: core('pods', this.namespace), labelSelector: this.selector, signal: this.ac.signal },
      {
        onList: (items) => {
          for (const i of items) this.observe(i);
          listed();
        },
        onEvent: (ev) => {
          if (ev.type !== 'DELETED') this.observe(ev.object);
        },
      },
    ).catch(() => undefined);
    await p;
  }

  /** Starts recording a rollout to `image`; `uids` are the pods' UIDs before it. */
  begin(image: string, t0: number, uids: Map<string, string>): void {
    this.target = { image, t0, pods: new Map(), uids };
  }

  end(): PodSteps[] {
    const t = this.target;
    this.target = undefined;
    return t ? [...t.pods.values()] : [];
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.running;
  }

  private observe(p: StepPod): void {
    const t = this.target;
    if (!t) return;
    let s = t.pods.get(p.metadata.name);
    if (!s) {
      s = { name: p.metadata.name, uid: p.metadata.uid, node: p.spec?.nodeName };
      t.pods.set(p.metadata.name, s);
    }
    s.uid = p.metadata.uid;
    markSteps(s, p, t.image, this.clock());
  }
}

/** The container running `image` and ready, with its restart count, if so. */
function readyContainer(p: StepPod, image: string): { restartCount: number | undefined } | undefined {
  const cs = p.status?.containerStatuses?.[0];
  return cs?.image === image && cs.ready === true ? { restartCount: cs.restartCount } : undefined;
}

/** Sets the first time each step is seen on this pod. */
export function markSteps(s: PodSteps, p: StepPod, image: string, at: number): void {
  const gate = cond(p, READINESS_GATE_IN_PLACE_UPDATE_READY);
  const newSpec = p.spec?.containers?.[0]?.image === image;
  if (s.gateFalse === undefined && gate === 'False') s.gateFalse = at;
  if (s.specImage === undefined && newSpec) s.specImage = at;
  const ready = newSpec ? readyContainer(p, image) : undefined;
  if (s.containerReady === undefined && ready) {
    s.containerReady = at;
    s.restartCount = ready.restartCount;
  }
  markAnomalies(s, p, newSpec, gate, at);
  markEnd(s, p, newSpec, gate === 'True', at);
}

/** Seen Ready on the new spec while the gate was False, and the early gate held False again (InPlaceGateHeld). */
function markAnomalies(s: PodSteps, p: StepPod, newSpec: boolean, gate: string | undefined, at: number): void {
  if (s.readyWhileGateFalse === undefined && newSpec && gate === 'False' && cond(p, 'Ready') === 'True') s.readyWhileGateFalse = at;
  if (s.gateHeld === undefined && gate === 'False' && reasonOf(p, READINESS_GATE_IN_PLACE_UPDATE_READY) === Reason.inPlaceGateHeld) s.gateHeld = at;
}

function markEnd(s: PodSteps, p: StepPod, newSpec: boolean, gateTrue: boolean, at: number): void {
  if (s.gateTrue === undefined && s.gateFalse !== undefined && gateTrue) s.gateTrue = at;
  // After the gate turned True (early: before the restart) and the new container was ready: a Ready the kubelet
  // has not yet recomputed since the gate went False, or one on the old container, is not the end.
  if (s.ready === undefined && s.gateTrue !== undefined && s.containerReady !== undefined && newSpec && cond(p, 'Ready') === 'True') s.ready = at;
}
