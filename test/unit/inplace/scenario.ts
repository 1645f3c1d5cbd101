/**
 * Scenario driver: loop nextInPlaceStep → applyInPlaceStep (one pod of the in-memory cluster) → in-memory kubelet
 * sync, with an injected clock; waits advance the clock instead of sleeping. Records every step and a timeline of what the pod showed,
 * and checks the protocol's invariants after every step.
 */
import { expect } from 'vitest';
import { Annotation, Label, Reason } from '../../../src/api/keys.ts';
import type { ResourceRef } from '../../../src/kube/paths.ts';
import type { PatchType } from '../../../src/kube/rest.ts';
import { applyInPlaceStep, type PatchClient } from '../../../src/workers/inplace/executor.ts';
import { IN_PLACE_GATE } from '../../../src/workers/inplace/gate.ts';
import { nextInPlaceStep, stepWait, type InPlaceStep } from '../../../src/workers/inplace/step.ts';
import type { InPlaceTarget } from '../../../src/workers/inplace/types.ts';
import type { Container, Pod, Stored } from '../../../src/kube/types.ts';
import { Clock } from '../../../harness/fakes/clock.ts';
import { FakeCluster } from '../../../harness/fakes/cluster.ts';
import { FakeKubelet, type KubeletOptions } from '../../../harness/fakes/kubelet.ts';

export interface Write {
  subresource: string | undefined;
  type: string;
  body: unknown;
}

/** One pod of the cluster as the in-place executor writes it (its PatchClient), recording the writes that landed. */
export class PodApi implements PatchClient {
  readonly writes: Write[] = [];
  private readonly cluster: FakeCluster;
  private readonly key: string;

  constructor(cluster: FakeCluster, pod: Pod) {
    this.cluster = cluster;
    const added = cluster.addPod(pod);
    this.key = `${added.metadata.namespace}/${added.metadata.name}`;
  }

  read(): Stored<Pod> {
    const pod = this.cluster.pods.get(this.key);
    if (!pod) throw new Error(`pod ${this.key} is gone`);
    return structuredClone(pod);
  }

  async patch<T>(ref: ResourceRef, body: unknown, type: PatchType): Promise<T> {
    const written = await this.cluster.client().podPatches.patch<T>(ref, body, type);
    this.writes.push({ subresource: ref.subresource, type, body });
    return written;
  }
}

export interface Env {
  clock: Clock;
  api: PodApi;
  kubelet: FakeKubelet;
}

export function newPod(containers: Container[], annotations?: Record<string, string>): Pod {
  return {
    metadata: {
      name: 'web-0',
      namespace: 'ns',
      uid: 'u-0',
      labels: { [Label.revision]: 'web-a', [Label.app]: 'web', tier: 'front' },
      ...(annotations ? { annotations } : {}),
    },
    spec: { containers, readinessGates: [{ conditionType: IN_PLACE_GATE }] },
    status: { conditions: [{ type: IN_PLACE_GATE, status: 'True', reason: 'PodCreated' }] },
  };
}

/** A running pod whose containers are all ready. */
export function env(pod: Pod, opts: Partial<KubeletOptions> = {}): Env {
  const clock = new Clock('2030-01-01T00:00:00.400Z');
  const cluster = new FakeCluster(clock.now);
  const api = new PodApi(cluster, pod);
  const kubelet = new FakeKubelet(cluster, clock, { startTicks: 0, ...opts });
  kubelet.sync();
  clock.advance(kubelet.opts.restartTicks * kubelet.opts.tickMs);
  kubelet.sync();
  clock.advance(1500);
  return { clock, api, kubelet };
}

export const gate = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
export const status = (pod: Pod, name: string) => pod.status?.containerStatuses?.find((s) => s.name === name);
export const image = (pod: Pod, name: string) => pod.spec?.containers?.find((c) => c.name === name)?.image;

export interface Sample {
  atMs: number;
  step: InPlaceStep['kind'];
  gate: string | undefined;
  annotated: boolean;
  images: Record<string, string>;
}

export interface DriveOptions {
  maxIterations?: number;
  /** Largest clock advance per wait (the pod's watch events come sooner than the safety timer). */
  tickMs?: number;
  /** Called before a write; 'skip' loses the step (the worker died before writing), 'stop' ends the run. */
  beforeApply?: (iteration: number, pod: Pod, step: InPlaceStep) => 'skip' | 'stop' | undefined;
  afterApply?: (iteration: number, before: Pod, step: InPlaceStep) => Promise<void> | void;
}

export interface Run {
  steps: InPlaceStep[];
  timeline: Sample[];
  /** Only the steps that write. */
  writes: InPlaceStep[];
}

function sample(e: Env, pod: Pod, step: InPlaceStep): Sample {
  return {
    atMs: e.clock.ms,
    step: step.kind,
    gate: gate(pod)?.status,
    annotated: pod.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined,
    images: Object.fromEntries((pod.spec?.containers ?? []).map((c) => [c.name, c.image])),
  };
}

/**
 * While the state annotation is on a gated pod, the gate is False (the pod is out of the Service), or released
 * early (True, InPlaceContainersRestarting) once the kubelet has observed the image patch
 * (`status.observedGeneration`): Ready then follows the new containers.
 */
function checkInvariants(pod: Pod): void {
  if (pod.metadata.annotations?.[Annotation.inPlaceUpdateState] === undefined) return;
  const g = gate(pod);
  if (g?.status === 'True') {
    expect(g.reason).toBe(Reason.inPlaceContainersRestarting);
    expect(pod.status?.observedGeneration ?? 0).toBeGreaterThanOrEqual(pod.metadata.generation ?? Infinity);
  } else expect(g?.status).toBe('False');
}

export async function drive(e: Env, target: InPlaceTarget, opts: DriveOptions = {}): Promise<Run> {
  const run: Run = { steps: [], timeline: [], writes: [] };
  for (let i = 0; i < (opts.maxIterations ?? 300); i++) {
    e.kubelet.sync();
    const pod = e.api.read();
    checkInvariants(pod);
    const step = nextInPlaceStep(pod, target, e.clock.now());
    run.steps.push(step);
    run.timeline.push(sample(e, pod, step));
    if (step.kind === 'done') return run;
    const wait = stepWait(step);
    if (wait) {
      expect(wait.afterMs).toBeGreaterThan(0);
      e.clock.advance(Math.min(wait.afterMs, opts.tickMs ?? 250));
      continue;
    }
    const verdict = opts.beforeApply?.(i, pod, step);
    if (verdict === 'stop') return run;
    if (verdict === 'skip') continue;
    await applyInPlaceStep(e.api, pod, step);
    run.writes.push(step);
    await opts.afterApply?.(i, pod, step);
    e.clock.advance(20);
  }
  return run;
}

export function target(revision: string, plan: Partial<InPlaceTarget['plan']>, gracePeriodSeconds = 0): InPlaceTarget {
  return { revision, gracePeriodSeconds, plan: { images: [], metadata: { labels: {}, annotations: {} }, resources: [], ...plan } };
}
