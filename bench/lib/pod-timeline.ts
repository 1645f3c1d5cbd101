/**
 * Watches the pods of one workload and records, per pod object (UID), when the benchmark's watch saw it
 * appear, get a node, turn Ready, start terminating and disappear. One observer for every controller, so
 * watch delivery latency is the same on both sides of a comparison. Waiters resolve on the event that
 * makes their predicate true, with that event's receive time.
 */
import { listWatch, type WatchEvent } from '../../src/kube/watch.ts';
import { core } from '../../src/kube/paths.ts';
import type { KubeRest } from '../../src/kube/rest.ts';
import type { Pod, Stored } from '../../src/kube/types.ts';

export type BenchPod = Stored<Pod>;

export interface PodRecord {
  name: string;
  uid: string;
  image: string | undefined;
  addedAt: number;
  scheduledAt?: number;
  node?: string;
  readyAt?: number;
  terminatingAt?: number;
  goneAt?: number;
}

interface Waiter {
  check: (pods: BenchPod[]) => boolean;
  resolve: (at: number) => void;
}

export function isReady(pod: BenchPod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

export function imageOf(pod: BenchPod): string | undefined {
  return pod.spec?.containers?.[0]?.image;
}

/** All `replicas` pods `<name>-0..n-1` exist, run `image`, are Ready and are not terminating. */
export function allAt(name: string, replicas: number, image: string): (pods: BenchPod[]) => boolean {
  return (pods) => {
    let ok = 0;
    for (const p of pods) {
      const ord = Number(p.metadata.name.slice(name.length + 1));
      if (!p.metadata.name.startsWith(`${name}-`) || !Number.isInteger(ord) || ord < 0 || ord >= replicas) continue;
      if (imageOf(p) === image && isReady(p) && !p.metadata.deletionTimestamp) ok++;
    }
    return ok === replicas;
  };
}

/**
 * As `allAt`, and each pod's first container reports running `image` ready: for an in-place update, whose pod shows
 * the new image in its spec while the kubelet still reports Ready from before the patch.
 */
export function allRunningAt(name: string, replicas: number, image: string): (pods: BenchPod[]) => boolean {
  const at = allAt(name, replicas, image);
  return (pods) =>
    at(pods) &&
    pods
      .filter((p) => p.metadata.name.startsWith(`${name}-`) && imageOf(p) === image && !p.metadata.deletionTimestamp)
      .every((p) => p.status?.containerStatuses?.[0]?.image === image && p.status.containerStatuses[0].ready === true);
}

export class PodTimeline {
  readonly records = new Map<string, PodRecord>();
  private readonly pods = new Map<string, BenchPod>();
  private waiters: Waiter[] = [];
  private readonly ac = new AbortController();
  private running: Promise<void> | undefined;
  private listed!: Promise<void>;

  private readonly rest: KubeRest;
  private readonly namespace: string;
  private readonly labelSelector: string;
  private readonly clock: () => number;

  constructor(rest: KubeRest, namespace: string, labelSelector: string, clock: () => number = () => performance.timeOrigin + performance.now()) {
    this.rest = rest;
    this.namespace = namespace;
    this.labelSelector = labelSelector;
    this.clock = clock;
  }

  /** Starts the list+watch; resolves once the first list is in. */
  start(): Promise<void> {
    let markListed!: () => void;
    this.listed = new Promise((r) => (markListed = r));
    this.running = listWatch<BenchPod>(
      { rest: this.rest, ref: core('pods', this.namespace), labelSelector: this.labelSelector, signal: this.ac.signal },
      {
        onList: (items) => {
          const at = this.clock();
          this.pods.clear();
          for (const p of items) this.observe(p, at);
          markListed();
          this.settle(at);
        },
        onEvent: (ev) => this.onEvent(ev),
      },
    ).catch(() => undefined);
    return this.listed;
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.running;
  }

  current(): BenchPod[] {
    return [...this.pods.values()];
  }

  /** Resolves with the receive time of the event after which `check` holds (at once if it holds now). */
  until(check: (pods: BenchPod[]) => boolean, timeoutMs: number, what: string): Promise<number> {
    if (check(this.current())) return Promise.resolve(this.clock());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const waiter: Waiter = {
        check,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private onEvent(ev: WatchEvent<BenchPod>): void {
    const at = this.clock();
    if (ev.type === 'DELETED') {
      this.pods.delete(ev.object.metadata.name);
      const rec = this.records.get(ev.object.metadata.uid);
      if (rec && rec.goneAt === undefined) rec.goneAt = at;
      if (rec && rec.terminatingAt === undefined) rec.terminatingAt = at;
    } else {
      this.observe(ev.object, at);
    }
    this.settle(at);
  }

  private observe(pod: BenchPod, at: number): void {
    this.pods.set(pod.metadata.name, pod);
    let rec = this.records.get(pod.metadata.uid);
    if (!rec) {
      rec = { name: pod.metadata.name, uid: pod.metadata.uid, image: imageOf(pod), addedAt: at };
      this.records.set(pod.metadata.uid, rec);
    }
    if (rec.scheduledAt === undefined && pod.spec?.nodeName) {
      rec.scheduledAt = at;
      rec.node = pod.spec.nodeName;
    }
    if (rec.readyAt === undefined && isReady(pod)) rec.readyAt = at;
    if (rec.terminatingAt === undefined && pod.metadata.deletionTimestamp) rec.terminatingAt = at;
  }

  private settle(at: number): void {
    if (this.waiters.length === 0) return;
    const pods = this.current();
    const done = this.waiters.filter((w) => w.check(pods));
    this.waiters = this.waiters.filter((w) => !done.includes(w));
    for (const w of done) w.resolve(at);
  }
}

/** Where the time of a one-pod-at-a-time recreate rollout went, from the pod timeline (ms). */
export interface RolloutBreakdown {
  /** Template change → first old pod terminating (controller: revision, first delete). */
  firstDelete: number;
  /** Σ old pod terminating → gone (kubelet: grace period and teardown). */
  terminate: number;
  /** Σ old pod gone → new pod seen (controller: create after the name is free). */
  create: number;
  /** Σ new pod seen → Ready (scheduler + kubelet: bind, attach, sandbox, pull, start, readiness). */
  start: number;
  /** Σ new pod Ready → next old pod terminating (controller: notice readiness, delete the next). */
  nextDelete: number;
  /** Ordinals whose old and new pod were both seen (= replicas when the timeline is complete). */
  pods: number;
  /** The max of each controller gap (ms), to spot outliers. */
  maxCreate: number;
  maxNextDelete: number;
}

/**
 * Splits a rollout that updated ordinals from replicas-1 down to 0 into controller and kubelet segments.
 * `t0` is when the template change was acknowledged; `newImage` tells old and new pod objects apart.
 */
export function breakdown(records: PodRecord[], name: string, replicas: number, t0: number, newImage: string): RolloutBreakdown {
  const b: RolloutBreakdown = { firstDelete: 0, terminate: 0, create: 0, start: 0, nextDelete: 0, pods: 0, maxCreate: 0, maxNextDelete: 0 };
  let prevReady: number | undefined;
  for (let ord = replicas - 1; ord >= 0; ord--) {
    const podName = `${name}-${ord}`;
    const mine = records.filter((r) => r.name === podName);
    const old = mine.find((r) => r.image !== newImage && r.terminatingAt !== undefined && r.terminatingAt >= t0);
    const fresh = mine.find((r) => r.image === newImage && r.addedAt >= t0);
    if (!old || !fresh || old.goneAt === undefined || fresh.readyAt === undefined || old.terminatingAt === undefined) continue;
    b.pods++;
    if (prevReady === undefined) b.firstDelete = old.terminatingAt - t0;
    else {
      const gap = old.terminatingAt - prevReady;
      b.nextDelete += gap;
      b.maxNextDelete = Math.max(b.maxNextDelete, gap);
    }
    b.terminate += old.goneAt - old.terminatingAt;
    const create = fresh.addedAt - old.goneAt;
    b.create += create;
    b.maxCreate = Math.max(b.maxCreate, create);
    b.start += fresh.readyAt - fresh.addedAt;
    prevReady = fresh.readyAt;
  }
  return b;
}
