/**
 * Builders shared by the simulated kubelet's unit tests: pods, runtimes in a given state, a fixed clock.
 */
import type { Container, Pod, PodSpec, Stored } from '../../../src/kube/types.ts';
import { newPodRuntime, withContainerStarted, withSandbox, withVolumesReady, type PodRuntime } from './runtime.ts';
import { defaultTimings, type KubeletTimings } from './timings.ts';

/** Start of every test clock: 2025-01-01T00:00:00Z. */
export const T0 = Date.UTC(2025, 0, 1);

export const timings: KubeletTimings = { ...defaultTimings, pullBackoffMs: 1_000, pullBackoffCapMs: 8_000, crashBackoffMs: 1_000, crashBackoffCapMs: 8_000 };

export function testPod(spec: Partial<PodSpec> = {}, meta: Partial<Pod['metadata']> = {}): Stored<Pod> {
  return {
    metadata: { name: 'web-0', namespace: 'ns', uid: 'uid-1', resourceVersion: '1', generation: 1, ...meta },
    spec: { nodeName: 'sim-node-0', containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }], qosClass: 'BestEffort' },
  };
}

/** A runtime with volumes and sandbox ready at T0. */
export function readyRuntime(uid = 'uid-1'): PodRuntime {
  return withSandbox(withVolumesReady(newPodRuntime(uid, T0), T0), '10.244.0.2', T0);
}

export function started(
  rt: PodRuntime,
  c: Container,
  at: number,
  opts: { readinessMs?: number; exit?: { afterMs: number; exitCode: number }; id?: string } = {},
): PodRuntime {
  return withContainerStarted(rt, {
    name: c.name,
    image: c.image,
    imageRef: `docker.io/library/${c.image.split(':')[0] ?? c.image}@sha256:${'a'.repeat(64)}`,
    containerId: `containerd://${(opts.id ?? c.name).padEnd(64, '0')}`,
    now: at,
    startupMs: 0,
    readinessMs: opts.readinessMs ?? 0,
    ...(opts.exit ? { exit: opts.exit } : {}),
    resources: c.resources ?? {},
  });
}
