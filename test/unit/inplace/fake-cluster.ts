/**
 * An in-memory pod API (the `PatchClient` the in-place executor writes through) and a fake kubelet with an
 * injected clock, for scenario tests of the in-place protocol. The API enforces resourceVersion preconditions
 * as the apiserver does (409 Conflict), merges pods/status conditions by type, and bumps the generation on spec
 * changes; the kubelet restarts a container whose spec image changed (new containerID, restartCount+1,
 * startedAt with second precision, imageID by digest), reports it ready after a delay, and actuates resizes.
 */
import { createHash } from 'node:crypto';
import fjp from 'fast-json-patch';
import { KubeError } from '../../../src/kube/errors.ts';
import type { ResourceRef } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { PatchClient } from '../../../src/workers/inplace/executor.ts';
import type { ContainerSpec, ContainerStatus, InPlacePod, PodCondition } from '../../../src/workers/inplace/types.ts';

export class Clock {
  ms: number;
  constructor(start = Date.parse('2030-01-01T00:00:00.400Z')) {
    this.ms = start;
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface Write {
  subresource: string | undefined;
  type: string;
  body: unknown;
}

export class FakePodApi implements PatchClient {
  pod: InPlacePod;
  readonly writes: Write[] = [];
  private rv = 1;

  constructor(pod: InPlacePod) {
    this.pod = structuredClone(pod);
    this.pod.metadata.resourceVersion = String(this.rv);
    this.pod.metadata.generation = 1;
  }

  read(): InPlacePod {
    return structuredClone(this.pod);
  }

  /** A write by someone else (the kubelet): bumps the resourceVersion. */
  mutate(change: (pod: InPlacePod) => void): void {
    change(this.pod);
    this.pod.metadata.resourceVersion = String(++this.rv);
  }

  async patch<T>(ref: ResourceRef, body: unknown, type: PatchType): Promise<T> {
    await Promise.resolve();
    const next = structuredClone(this.pod);
    if (type === PatchType.json) this.applyJson(next, body as fjp.Operation[]);
    else {
      this.checkRv(isObj(body) && isObj(body.metadata) ? body.metadata.resourceVersion : undefined);
      if (ref.subresource === 'status') applyStatus(next, body as Json);
      else if (ref.subresource === 'resize') applyResize(next, body as Json);
      else throw new Error(`unexpected patch of ${ref.subresource ?? 'pod'} with ${type}`);
    }
    if (JSON.stringify(next.spec) !== JSON.stringify(this.pod.spec)) next.metadata.generation = (next.metadata.generation ?? 1) + 1;
    next.metadata.resourceVersion = String(++this.rv);
    this.pod = next;
    this.writes.push({ subresource: ref.subresource, type, body });
    return structuredClone(next) as T;
  }

  private checkRv(rv: unknown): void {
    if (rv !== undefined && rv !== this.pod.metadata.resourceVersion) throw new KubeError('Conflict', 409, 'the object has been modified');
  }

  private applyJson(next: InPlacePod, ops: fjp.Operation[]): void {
    for (const op of ops) {
      if (op.path === '/metadata/resourceVersion') {
        this.checkRv((op as { value: unknown }).value);
        continue;
      }
      try {
        fjp.applyOperation(next, op, true, true);
      } catch {
        throw new KubeError('Invalid', 422, `cannot apply ${op.op} ${op.path}`);
      }
    }
  }
}

function applyStatus(pod: InPlacePod, body: Json): void {
  const meta = isObj(body.metadata) ? body.metadata : {};
  if (isObj(meta.annotations)) {
    const annotations = { ...(pod.metadata.annotations ?? {}) };
    for (const [k, v] of Object.entries(meta.annotations)) {
      if (v === null) delete annotations[k];
      else annotations[k] = typeof v === 'string' ? v : JSON.stringify(v);
    }
    pod.metadata.annotations = annotations;
  }
  const conditions = isObj(body.status) && Array.isArray(body.status.conditions) ? (body.status.conditions as PodCondition[]) : [];
  const list = [...(pod.status?.conditions ?? [])];
  for (const c of conditions) {
    const i = list.findIndex((x) => x.type === c.type);
    if (i >= 0) list[i] = { ...list[i], ...c };
    else list.push(c);
  }
  pod.status = { ...(pod.status ?? {}), conditions: list };
}

function mergeResources(into: ContainerSpec['resources'], from: ContainerSpec['resources']): ContainerSpec['resources'] {
  return { ...into, requests: { ...into?.requests, ...from?.requests }, limits: { ...into?.limits, ...from?.limits } };
}

function applyResize(pod: InPlacePod, body: Json): void {
  const spec = isObj(body.spec) ? body.spec : {};
  for (const c of (spec.containers ?? []) as ContainerSpec[]) {
    const target = pod.spec?.containers?.find((x) => x.name === c.name);
    if (!target) throw new KubeError('Invalid', 422, `no container ${c.name}`);
    target.resources = mergeResources(target.resources, c.resources);
  }
}

interface Running {
  image: string;
  imageID: string;
  containerID: string;
  restartCount: number;
  startedAtMs: number;
  readyAtMs: number;
  resources: ContainerSpec['resources'];
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const rfc3339 = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export interface KubeletOptions {
  readyDelayMs?: number;
  /** `image → image`: a tag that resolves to the content (digest) of another reference. */
  aliases?: Record<string, string>;
}

/** Restarts containers whose spec image changed, as a kubelet does on its next sync. */
export class FakeKubelet {
  private readonly running = new Map<string, Running>();
  private seq = 0;
  private readonly api: FakePodApi;
  private readonly clock: Clock;
  private readonly opts: KubeletOptions;

  constructor(api: FakePodApi, clock: Clock, opts: KubeletOptions = {}) {
    this.api = api;
    this.clock = clock;
    this.opts = opts;
  }

  private imageID(image: string): string {
    const content = this.opts.aliases?.[image] ?? image;
    return `${image.split(':')[0] ?? image}@sha256:${sha(content)}`;
  }

  private start(c: ContainerSpec, previous: Running | undefined): Running {
    const now = this.clock.ms;
    const neverReady = /(^|\/)crashloop/.test(c.image.split(':')[0] ?? '');
    return {
      image: c.image,
      imageID: this.imageID(c.image),
      containerID: `containerd://${sha(`${c.name}-${++this.seq}`)}`,
      restartCount: previous ? previous.restartCount + 1 : 0,
      startedAtMs: now,
      readyAtMs: neverReady ? Number.POSITIVE_INFINITY : now + (this.opts.readyDelayMs ?? 1000),
      resources: structuredClone(c.resources),
    };
  }

  private statusOf(c: ContainerSpec, r: Running): ContainerStatus {
    return {
      name: c.name,
      image: r.image,
      imageID: r.imageID,
      containerID: r.containerID,
      restartCount: r.restartCount,
      ready: this.clock.ms >= r.readyAtMs,
      state: { running: { startedAt: rfc3339(r.startedAtMs) } },
      ...(r.resources ? { resources: r.resources } : {}),
    };
  }

  /** One sync: restart changed containers, actuate resizes, write status when it changed. */
  sync(): void {
    const pod = this.api.pod;
    const statuses: ContainerStatus[] = [];
    for (const c of pod.spec?.containers ?? []) {
      let r = this.running.get(c.name);
      if (!r || r.image !== c.image) r = this.start(c, r);
      else if (JSON.stringify(r.resources) !== JSON.stringify(c.resources)) r = { ...r, resources: structuredClone(c.resources) };
      this.running.set(c.name, r);
      statuses.push(this.statusOf(c, r));
    }
    const ready = statuses.every((s) => s.ready);
    const before = JSON.stringify([pod.status?.containerStatuses, pod.status?.observedGeneration, ready]);
    const after = JSON.stringify([statuses, pod.metadata.generation, ready]);
    if (before === after) return;
    this.api.mutate((p) => {
      const conditions = (p.status?.conditions ?? []).filter((x) => x.type !== 'ContainersReady');
      conditions.push({ type: 'ContainersReady', status: ready ? 'True' : 'False' });
      p.status = { ...(p.status ?? {}), phase: 'Running', observedGeneration: p.metadata.generation, containerStatuses: statuses, conditions };
    });
  }
}
