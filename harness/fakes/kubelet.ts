/**
 * The in-memory kubelet of the scenario tests, on the in-memory apiserver (cluster.ts) and a clock the test
 * drives. It decides and reports what the sandbox's simulated kubelet does, by running that kubelet's pure
 * parts: the step planner (harness/sandbox/node/plan.ts), the runtime transitions (runtime.ts), the pod status
 * builder (pod-status.ts) and the pods/status patch (status-patch.ts). What it leaves out is time: a sync does
 * every step due at once. The delays that remain are counted on the clock:
 * - a new pod starts `startTicks` ticks after its creation (scheduling, pull, start and first probe in one);
 * - a deleted pod is gone `terminateTicks` ticks after its deletion (its grace period; its status stays as is);
 * - a container restarted in a running pod (new image, or a resize its resizePolicy restarts for) is ready
 *   `restartTicks` ticks after it started; a container of an image the sandbox would crash-loop is never ready.
 * Images resolve to the digest they name, else to a digest of their name, or of the reference `aliases` maps
 * them to (a tag moved to the same content).
 */
import { createHash } from 'node:crypto';
import type { Pod, Stored } from '../../src/kube/types.ts';
import { PodIPPool } from '../sandbox/node/addresses.ts';
import { nextStep, type NodeCapacityView, type Step } from '../sandbox/node/plan.ts';
import { buildPodStatus } from '../sandbox/node/pod-status.ts';
import { applyInstantStep } from '../sandbox/node/transition.ts';
import { newPodRuntime, withContainerExited, withContainerStarted, type PodRuntime } from '../sandbox/node/runtime.ts';
import { statusPatch } from '../sandbox/node/status-patch.ts';
import { defaultFaults, defaultTimings } from '../sandbox/node/timings.ts';
import type { Clock } from './clock.ts';
import type { FakeCluster } from './cluster.ts';

export interface KubeletOptions {
  /** How far one tick() moves the clock. */
  tickMs: number;
  /** Ticks from a pod's creation until its containers run. */
  startTicks: number;
  /** Ticks from a pod's deletion until it is gone. */
  terminateTicks: number;
  /** Ticks from the start of a container restarted in a running pod until it is ready. */
  restartTicks: number;
  /** `image → image`: a reference whose content (digest) is that of another one. */
  aliases: Record<string, string>;
  /** Containers of these images never become ready. */
  neverReady: RegExp;
}

type StartStep = Extract<Step, { kind: 'startContainer' }>;

const HOST_IP = '127.0.1.1';
/** Room for any resize: admission never defers or refuses one here. */
const NODE: NodeCapacityView = { allocatable: { cpu: '1000', memory: '1Ti' }, otherPodsRequests: [] };
/** A sync takes a handful of steps (volumes, sandbox, one per container and resize); more is a planner loop. */
const MAX_STEPS = 100;

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const key = (pod: Stored<Pod>): string => `${pod.metadata.namespace}/${pod.metadata.name}`;

export class FakeKubelet {
  readonly opts: KubeletOptions;
  private readonly cluster: FakeCluster;
  private readonly clock: Clock;
  private readonly runtimes = new Map<string, PodRuntime>();
  private readonly age = new Map<string, number>();
  private readonly dying = new Map<string, number>();
  private readonly ips = new PodIPPool(0);
  private seq = 0;

  constructor(cluster: FakeCluster, clock: Clock, opts: Partial<KubeletOptions> = {}) {
    this.cluster = cluster;
    this.clock = clock;
    this.opts = {
      tickMs: 1000,
      startTicks: 2,
      terminateTicks: 1,
      restartTicks: 1,
      aliases: {},
      neverReady: new RegExp(defaultFaults.crashImagePattern),
      ...opts,
    };
  }

  /** Moves the clock one tick, counts it against every pod's start or termination, then syncs. */
  tick(): void {
    this.clock.advance(this.opts.tickMs);
    for (const pod of [...this.cluster.pods.values()]) {
      const uid = pod.metadata.uid;
      if (!pod.metadata.deletionTimestamp) {
        this.age.set(uid, (this.age.get(uid) ?? 0) + 1);
        continue;
      }
      const d = (this.dying.get(uid) ?? 0) + 1;
      this.dying.set(uid, d);
      if (d >= this.opts.terminateTicks) this.remove(pod);
    }
    this.sync();
  }

  /** Syncs every pod this kubelet runs at the current time: does the steps due, posts the status when it changed. */
  sync(): void {
    for (const pod of [...this.cluster.pods.values()]) if (this.runs(pod)) this.syncPod(pod);
  }

  /** The pod's containers exit with an error and the pod fails for good (phase Failed, restartPolicy aside). */
  fail(ns: string, name: string): void {
    const pod = this.cluster.pods.get(`${ns}/${name}`);
    if (!pod) return;
    const now = this.clock.ms;
    let rt = this.runtimes.get(pod.metadata.uid) ?? newPodRuntime(pod.metadata.uid, now);
    for (const c of Object.values(rt.containers)) rt = withContainerExited(rt, c.name, { exitCode: 1, reason: 'Error', now, crashed: true });
    rt = { ...rt, terminated: true };
    this.runtimes.set(pod.metadata.uid, rt);
    this.post({ ...pod, status: { ...pod.status, phase: 'Failed' } }, rt);
  }

  /**
   * The pod's running containers exit with an error (a crash); the kubelet restarts them per restartPolicy.
   * With their image in `neverReady`, the restarted containers never become ready again: a crash loop.
   */
  crash(ns: string, name: string): void {
    const pod = this.cluster.pods.get(`${ns}/${name}`);
    const rt0 = pod ? this.runtimes.get(pod.metadata.uid) : undefined;
    if (!pod || !rt0) return;
    let rt = rt0;
    for (const c of Object.values(rt0.containers))
      if (c.phase.kind === 'running') rt = withContainerExited(rt, c.name, { exitCode: 1, reason: 'Error', now: this.clock.ms, crashed: true });
    this.runtimes.set(pod.metadata.uid, rt);
    this.post(pod, rt);
  }

  private runs(pod: Stored<Pod>): boolean {
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') return false;
    const uid = pod.metadata.uid;
    return this.runtimes.has(uid) || (this.age.get(uid) ?? 0) >= this.opts.startTicks;
  }

  private remove(pod: Stored<Pod>): void {
    const uid = pod.metadata.uid;
    for (const m of [this.runtimes, this.age, this.dying]) m.delete(uid);
    this.ips.release(uid);
    this.cluster.removePod(pod.metadata.namespace, pod.metadata.name);
  }

  private syncPod(pod: Stored<Pod>): void {
    const now = this.clock.ms;
    let rt = this.runtimes.get(pod.metadata.uid) ?? newPodRuntime(pod.metadata.uid, now);
    for (let i = 0; ; i++) {
      const step = nextStep({ pod, runtime: rt, now, timings: defaultTimings, node: NODE });
      if (step.kind === 'wait') break;
      if (i === MAX_STEPS) throw new Error(`fake kubelet: pod ${key(pod)} never settles (step ${step.kind})`);
      rt = this.execute(pod, rt, step, now);
    }
    this.runtimes.set(pod.metadata.uid, rt);
    this.post(pod, rt);
  }

  private post(pod: Stored<Pod>, rt: PodRuntime): void {
    const desired = buildPodStatus({ pod, runtime: rt, now: this.clock.ms, hostIP: HOST_IP, timings: defaultTimings });
    this.cluster.kubeletPatchStatus(pod.metadata.namespace, pod.metadata.name, statusPatch(pod.metadata.uid, desired, pod.status));
  }

  private execute(pod: Stored<Pod>, rt: PodRuntime, step: Exclude<Step, { kind: 'wait' }>, now: number): PodRuntime {
    if (step.kind === 'terminate') throw new Error(`fake kubelet: pod ${key(pod)} is deleted; tick() ends it`);
    if (step.kind === 'startContainer') return this.start(rt, step, now);
    return applyInstantStep(rt, step, now, () => this.ips.allocate(rt.uid));
  }

  /** Stops the running instance when it is replaced, then starts a new one: at once, its image always present. */
  private start(rt0: PodRuntime, step: StartStep, now: number): PodRuntime {
    const c = step.container;
    const previous = rt0.containers[c.name];
    const rt =
      step.restart && previous?.phase.kind === 'running' ? withContainerExited(rt0, c.name, { exitCode: 0, reason: 'Completed', now, crashed: false }) : rt0;
    const restarted = (previous?.created ?? 0) > 0;
    return withContainerStarted(rt, {
      name: c.name,
      image: c.image,
      imageRef: this.imageID(c.image),
      containerId: `containerd://${sha(`${rt.uid}/${c.name}-${++this.seq}`)}`,
      now,
      startupMs: 0,
      readinessMs: this.opts.neverReady.test(c.image) ? Number.POSITIVE_INFINITY : restarted ? this.opts.restartTicks * this.opts.tickMs : 0,
      ...(step.containerKind === 'init' ? { exit: { afterMs: 0, exitCode: 0 } } : {}),
      resources: step.resources,
    });
  }

  /** `repo@sha256:…` as the runtime reports it (status.imageID). */
  private imageID(image: string): string {
    const digest = /@(sha256:[0-9a-f]+)$/.exec(image)?.[1] ?? `sha256:${sha(this.opts.aliases[image] ?? image)}`;
    return `${image.replace(/@sha256:[0-9a-f]+$/, '').replace(/:[^/:]+$/, '')}@${digest}`;
  }
}
