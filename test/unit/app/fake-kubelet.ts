/**
 * An in-memory kubelet for scenario tests: pods become Running `startTicks` ticks after creation, terminating
 * pods disappear `terminateTicks` ticks after deletion. One tick advances the injected clock. Containers are
 * simulated as a kubelet reports them (imageID by digest, containerID, restartCount, startedAt with second
 * precision, ready): a container whose spec image changes is restarted in place and is ready again
 * `restartTicks` ticks later; a resize is actuated on the next tick without a restart. Ready follows the
 * readiness gates: False (ReadinessGatesNotReady) while a gate condition is not True.
 */
import { createHash } from 'node:crypto';
import type { FakeCluster } from '../../../src/workers/app/fake-client.ts';
import type { Pod, PodCondition } from '../../../src/workers/app/kube-types.ts';

export class Clock {
  private t: number;
  constructor(start = Date.parse('2025-06-01T12:00:00Z')) {
    this.t = start;
  }
  now = (): Date => new Date(this.t);
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface KubeletOptions {
  startTicks: number;
  terminateTicks: number;
  /** Ticks from an in-place restart until the container is ready again. */
  restartTicks: number;
  tickMs: number;
  /** `image → image`: a reference whose content (digest) is that of another one (a tag moved to the same digest). */
  aliases: Record<string, string>;
}

interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

interface ContainerSpec {
  name: string;
  image: string;
  resources?: Resources;
}

interface Instance {
  image: string;
  containerID: string;
  restartCount: number;
  startedAtMs: number;
  readyAtMs: number;
  resources: Resources | undefined;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const seconds = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const KUBELET_CONDITIONS = new Set(['Ready', 'ContainersReady']);

export class FakeKubelet {
  private readonly age = new Map<string, number>();
  private readonly dying = new Map<string, number>();
  /** Running containers by `<pod uid>/<container>`. */
  private readonly running = new Map<string, Instance>();
  private seq = 0;
  private readonly cluster: FakeCluster;
  private readonly clock: Clock;
  readonly opts: KubeletOptions;

  constructor(cluster: FakeCluster, clock: Clock, opts: Partial<KubeletOptions> = {}) {
    this.cluster = cluster;
    this.clock = clock;
    this.opts = { startTicks: 2, terminateTicks: 1, restartTicks: 1, tickMs: 1000, aliases: {}, ...opts };
  }

  tick(): void {
    this.clock.advance(this.opts.tickMs);
    for (const pod of [...this.cluster.pods.values()]) {
      const uid = pod.metadata.uid ?? '';
      if (pod.metadata.deletionTimestamp) {
        const d = (this.dying.get(uid) ?? 0) + 1;
        this.dying.set(uid, d);
        if (d >= this.opts.terminateTicks) this.cluster.removePod(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
        continue;
      }
      const a = (this.age.get(uid) ?? 0) + 1;
      this.age.set(uid, a);
      if (pod.status?.phase === 'Running' || (pod.status?.phase === 'Pending' && a >= this.opts.startTicks)) this.sync(pod);
    }
  }

  imageID(image: string): string {
    const digest = /@(sha256:[0-9a-f]+)$/.exec(image)?.[1] ?? `sha256:${sha(this.opts.aliases[image] ?? image)}`;
    return `${image.replace(/@sha256:[0-9a-f]+$/, '').replace(/:[^/:]+$/, '')}@${digest}`;
  }

  private instance(key: string, c: ContainerSpec): Instance {
    const now = this.clock.now().getTime();
    const previous = this.running.get(key);
    if (previous && previous.image === c.image) return { ...previous, resources: structuredClone(c.resources) };
    return {
      image: c.image,
      containerID: `containerd://${sha(`${key}-${++this.seq}`)}`,
      restartCount: previous ? previous.restartCount + 1 : 0,
      startedAtMs: now,
      // A new pod's containers are ready at once; a restarted one after restartTicks.
      readyAtMs: previous ? now + this.opts.restartTicks * this.opts.tickMs : now,
      resources: structuredClone(c.resources),
    };
  }

  /** One pod sync: start or restart containers, actuate resizes, write status when it changed. */
  private sync(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const now = this.clock.now().getTime();
    const statuses = ((pod.spec?.['containers'] ?? []) as ContainerSpec[]).map((c) => {
      const key = `${uid}/${c.name}`;
      const r = this.instance(key, c);
      this.running.set(key, r);
      return {
        name: c.name,
        image: r.image,
        imageID: this.imageID(r.image),
        containerID: r.containerID,
        restartCount: r.restartCount,
        ready: now >= r.readyAtMs,
        state: { running: { startedAt: seconds(r.startedAtMs) } },
        ...(r.resources ? { resources: r.resources } : {}),
      };
    });
    const containersReady = statuses.every((s) => s.ready);
    const gatesReady = (pod.spec?.readinessGates ?? []).every((g) => pod.status?.conditions?.find((c) => c.type === g.conditionType)?.status === 'True');
    const conditions = [
      ...(pod.status?.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type)),
      this.condition(pod, 'ContainersReady', containersReady, 'ContainersNotReady'),
      this.condition(pod, 'Ready', containersReady && gatesReady, containersReady ? 'ReadinessGatesNotReady' : 'ContainersNotReady'),
    ];
    const status = { ...(pod.status ?? {}), phase: 'Running', conditions, containerStatuses: statuses };
    if (JSON.stringify(status) !== JSON.stringify(pod.status)) this.cluster.setPodStatus(pod.metadata.namespace ?? '', pod.metadata.name ?? '', status);
  }

  private condition(pod: Pod, type: string, ok: boolean, reason: string): PodCondition {
    const previous = pod.status?.conditions?.find((c) => c.type === type);
    const status = ok ? 'True' : 'False';
    const lastTransitionTime = previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : this.clock.now().toISOString();
    return { type, status, lastTransitionTime, ...(ok ? {} : { reason }) };
  }

  /** The pod's container exits for good (restartPolicy aside): phase Failed. */
  fail(ns: string, name: string): void {
    this.cluster.setPodStatus(ns, name, { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: this.clock.now().toISOString() }] });
  }
}
