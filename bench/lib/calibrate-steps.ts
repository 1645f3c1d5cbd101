/**
 * One node's kubelet steps, timed on fresh bare pods bound to the node by name (no scheduler, no controller), the
 * same way on a real node and on a simulated one, so the two can be set side by side. Times are the receive
 * times of the benchmark's pod watch (and of an Event watch for `Pulling`), never the conditions' one-second
 * timestamps. Each sample uses new pods: a kubelet keys its restart back-off by pod and container spec, so
 * reusing one pod across samples would measure the back-off, not the step.
 */
import { sleep, waitFor } from '../../src/common/wait.ts';
import { READINESS_GATE_IN_PLACE_UPDATE_READY as GATE } from '../../src/api/keys.ts';
import { core } from '../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../src/kube/rest.ts';
import { listWatch } from '../../src/kube/watch.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { PodTimeline, isReady, type BenchPod } from './pod-timeline.ts';
import { realPodTemplate } from './realnode-workloads.ts';
import { SET_LABEL } from './workloads.ts';

const clock = (): number => performance.timeOrigin + performance.now();
/** Rest before each step: the kubelet's relist and probes settle. */
const IDLE_MS = 1_000;
const STEP_TIMEOUT_MS = 120_000;

export const STEPS = {
  inPlace: 'in place, no gate: image patch → Ready',
  restart: '  container restart: image patch → new container running',
  probe: '  new container running → Ready',
  inPlaceGate: "in place with ebb's gate: image patch → Ready",
  gateTrue: 'gate True → Ready recomputed',
  gateFalse: 'gate False → Ready False',
  recreate: 'recreate: delete → new pod Ready',
  deleteGone: '  delete → pod gone',
  firstStart: 'sandbox + first start: created → Ready (image present)',
  firstRunning: '  created → Running',
  pullStart: 'pull start: created → Pulling Event (image absent)',
  volume: 'created → Ready with a PVC',
} as const;
export type StepName = keyof typeof STEPS;
export type StepSamples = Partial<Record<StepName, number[]>>;

export interface CalibrationImages {
  /** Two images present on the node (after the warm-up). */
  a: string;
  b: string;
  /** An image absent from the node, made absent now if need be. */
  absent(): Promise<string>;
}

interface KubeEvent extends KubeObject {
  reason?: string;
  involvedObject?: { uid?: string };
}

/** The namespace's Events with their receive times; waits for one by pod UID and reason. */
class EventTimeline {
  private readonly seen: { uid: string; reason: string; at: number }[] = [];
  private readonly ac = new AbortController();
  private running: Promise<void> | undefined;
  private readonly rest: KubeRest;
  private readonly ns: string;

  constructor(rest: KubeRest, ns: string) {
    this.rest = rest;
    this.ns = ns;
  }

  start(): void {
    const record = (e: KubeEvent): void => void this.seen.push({ uid: e.involvedObject?.uid ?? '', reason: e.reason ?? '', at: clock() });
    this.running = listWatch<KubeEvent>(
      { rest: this.rest, ref: core('events', this.ns), signal: this.ac.signal },
      { onList: (items) => items.forEach(record), onEvent: (ev) => (ev.type === 'DELETED' ? undefined : record(ev.object)) },
    ).catch(() => undefined);
  }

  async until(uid: string, reason: string, signal: AbortSignal): Promise<number> {
    return waitFor(() => this.seen.find((e) => e.uid === uid && e.reason === reason)?.at, {
      timeoutMs: STEP_TIMEOUT_MS,
      intervalMs: 20,
      signal,
      what: `${reason} event`,
    });
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.running;
  }
}

const containerOf = (p: BenchPod): NonNullable<NonNullable<BenchPod['status']>['containerStatuses']>[number] | undefined => p.status?.containerStatuses?.[0];
const live = (pods: BenchPod[], name: string): BenchPod | undefined => pods.find((p) => p.metadata.name === name && !p.metadata.deletionTimestamp);

export class CalibrationNode {
  private readonly timeline: PodTimeline;
  private readonly events: EventTimeline;
  private readonly opts: { rest: KubeRest; ns: string; node: string; side: string; images: CalibrationImages; graceSeconds: number; signal: AbortSignal };

  constructor(opts: CalibrationNode['opts']) {
    this.opts = opts;
    this.timeline = new PodTimeline(opts.rest, opts.ns, `${SET_LABEL}=cal-${opts.side}`);
    this.events = new EventTimeline(opts.rest, opts.ns);
  }

  async start(): Promise<void> {
    await this.timeline.start();
    this.events.start();
  }

  async stop(): Promise<void> {
    await this.timeline.stop();
    await this.events.stop();
  }

  private until(check: (pods: BenchPod[]) => boolean, what: string): Promise<number> {
    return this.timeline.until(check, STEP_TIMEOUT_MS, `${this.opts.side}: ${what}`);
  }

  private pod(name: string, image: string, extra: { gated?: boolean; claim?: string } = {}): Record<string, unknown> {
    const t = realPodTemplate(name, image, this.opts.graceSeconds) as { spec: { containers: Record<string, unknown>[] } & Record<string, unknown> };
    const { nodeSelector: _n, topologySpreadConstraints: _t, ...spec } = t.spec;
    const main = { ...t.spec.containers[0], ...(extra.claim ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}) };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { [SET_LABEL]: `cal-${this.opts.side}` } },
      spec: {
        ...spec,
        nodeName: this.opts.node,
        containers: [main],
        ...(extra.gated ? { readinessGates: [{ conditionType: GATE }] } : {}),
        ...(extra.claim ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: extra.claim } }] } : {}),
      },
    };
  }

  private async create(name: string, image: string, extra: { gated?: boolean; claim?: string } = {}): Promise<{ t0: number; uid: string }> {
    const t0 = clock();
    const pod = await this.opts.rest.create<BenchPod>(core('pods', this.opts.ns), this.pod(name, image, extra));
    return { t0, uid: pod.metadata.uid };
  }

  private readyOn(name: string, image: string, minRestarts = 0): (pods: BenchPod[]) => boolean {
    return (pods) => {
      const p = live(pods, name);
      const cs = p && containerOf(p);
      return p !== undefined && cs?.image === image && cs.ready && (cs.restartCount ?? 0) >= minRestarts && isReady(p);
    };
  }

  private async deleteAndWait(name: string): Promise<number> {
    const t0 = clock();
    await this.opts.rest.delete(core('pods', this.opts.ns, name));
    return (await this.until((pods) => !pods.some((p) => p.metadata.name === name), `${name} gone`)) - t0;
  }

  private async setGate(name: string, status: 'True' | 'False'): Promise<void> {
    const condition = { type: GATE, status, lastTransitionTime: new Date().toISOString() };
    await this.opts.rest.patch(core('pods', this.opts.ns, name, 'status'), { status: { conditions: [condition] } }, PatchType.strategic);
  }

  private patchImage(name: string, image: string): Promise<BenchPod> {
    return this.opts.rest.patch<BenchPod>(core('pods', this.opts.ns, name), { spec: { containers: [{ name: 'main', image }] } }, PatchType.strategic);
  }

  /** Runs both images once on the node (not measured), so that later samples find them present. */
  async warmUp(): Promise<void> {
    const name = `cal-${this.opts.side}-warm`;
    const { a, b } = this.opts.images;
    await this.create(name, a);
    await this.until(this.readyOn(name, a), 'warm-up on the first image');
    await this.patchImage(name, b);
    await this.until(this.readyOn(name, b, 1), 'warm-up on the second image');
    await this.deleteAndWait(name);
  }

  /** One sample of every step, on new pods named after `i`. */
  async sample(i: number, into: StepSamples, withVolume: boolean): Promise<void> {
    const push = (step: StepName, ms: number): void => void (into[step] ??= []).push(ms);
    const { a, b } = this.opts.images;
    const signal = this.opts.signal;
    const plain = `cal-${this.opts.side}-${i}-p`;
    // Sandbox + first start, then in place without the gate, then recreate.
    await sleep(IDLE_MS, signal);
    const created = await this.create(plain, a);
    const running = await this.until((pods) => live(pods, plain)?.status?.phase === 'Running', 'Running');
    push('firstRunning', running - created.t0);
    push('firstStart', (await this.until(this.readyOn(plain, a), 'first start Ready')) - created.t0);
    await sleep(IDLE_MS, signal);
    const t0 = clock();
    await this.patchImage(plain, b);
    const restarted = await this.until((pods) => {
      const cs = live(pods, plain) && containerOf(live(pods, plain)!);
      return cs?.image === b && cs.state?.running !== undefined && (cs.restartCount ?? 0) >= 1;
    }, 'new container running');
    const ready = await this.until(this.readyOn(plain, b, 1), 'in place Ready');
    push('restart', restarted - t0);
    push('probe', ready - restarted);
    push('inPlace', ready - t0);
    await sleep(IDLE_MS, signal);
    const d0 = clock();
    push('deleteGone', await this.deleteAndWait(plain));
    await this.create(plain, b);
    push('recreate', (await this.until(this.readyOn(plain, b), 'recreated Ready')) - d0);
    await this.deleteAndWait(plain);
    await this.gated(`cal-${this.opts.side}-${i}-g`, push);
    await this.pullStart(`cal-${this.opts.side}-${i}-u`, push);
    if (withVolume) await this.volume(`cal-${this.opts.side}-${i}-v`, push);
  }

  /** The gate's own steps, and ebb's in-place protocol by hand (gate False, image patch, the kubelet observed it → gate True, Ready). */
  private async gated(name: string, push: (step: StepName, ms: number) => void): Promise<void> {
    const { a, b } = this.opts.images;
    const signal = this.opts.signal;
    await this.create(name, a, { gated: true });
    await this.until((pods) => containerOf(live(pods, name) ?? ({} as BenchPod))?.ready === true, 'gated container ready');
    await sleep(IDLE_MS, signal);
    let t0 = clock();
    await this.setGate(name, 'True');
    push('gateTrue', (await this.until(this.readyOn(name, a), 'Ready after gate True')) - t0);
    await sleep(IDLE_MS, signal);
    await this.setGate(name, 'False');
    t0 = clock();
    const patched = await this.patchImage(name, b);
    const generation = patched.metadata.generation ?? Infinity;
    await this.until((pods) => (live(pods, name)?.status?.observedGeneration ?? 0) >= generation, 'patch observed');
    await this.setGate(name, 'True');
    push('inPlaceGate', (await this.until(this.readyOn(name, b, 1), 'Ready after the early gate')) - t0);
    await sleep(IDLE_MS, signal);
    t0 = clock();
    await this.setGate(name, 'False');
    push('gateFalse', (await this.until((pods) => live(pods, name) !== undefined && !isReady(live(pods, name)!), 'Ready False after gate False')) - t0);
    await this.deleteAndWait(name);
  }

  private async pullStart(name: string, push: (step: StepName, ms: number) => void): Promise<void> {
    const image = await this.opts.images.absent();
    await sleep(IDLE_MS, this.opts.signal);
    const { t0, uid } = await this.create(name, image);
    push('pullStart', (await this.events.until(uid, 'Pulling', this.opts.signal)) - t0);
    await this.until(this.readyOn(name, image), 'pulled pod Ready');
    await this.deleteAndWait(name);
  }

  /** A pod with a claim of the class that binds at once (its PV exists before the pod: attach and mount only). */
  private async volume(name: string, push: (step: StepName, ms: number) => void): Promise<void> {
    const { rest, ns, signal } = this.opts;
    const claim = `${name}-data`;
    await rest.create(core('persistentvolumeclaims', ns), {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: claim },
      spec: { storageClassName: 'standard-immediate', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await waitFor(
      async () => ((await rest.get<{ status?: { phase?: string } }>(core('persistentvolumeclaims', ns, claim))).status?.phase === 'Bound' ? true : undefined),
      { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 100, signal, what: `${claim} Bound` },
    );
    await sleep(IDLE_MS, signal);
    const { t0 } = await this.create(name, this.opts.images.a, { claim });
    push('volume', (await this.until(this.readyOn(name, this.opts.images.a), 'pod with a PVC Ready')) - t0);
    await this.deleteAndWait(name);
    await rest.delete(core('persistentvolumeclaims', ns, claim));
  }
}
