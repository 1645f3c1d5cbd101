/**
 * Drives the in-place step function and executor against the sandbox from the test itself (no worker): read
 * the pod, compute the step, write it, repeat. A `wait` (grace period) is slept out like the timer it becomes;
 * a `waitRunning` polls every `pollMs` in place of the pod watch events that bring the next reconcile in
 * production. Every read and write is recorded.
 */
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { applyInPlaceStep, markGateReady } from '../../../src/workers/inplace/executor.ts';
import { IN_PLACE_GATE } from '../../../src/workers/inplace/gate.ts';
import { nextInPlaceStep, stepWait, type InPlaceStep } from '../../../src/workers/inplace/step.ts';
import type { InPlaceTarget } from '../../../src/workers/inplace/types.ts';
import { Label } from '../../../src/api/keys.ts';
import type { Pod, PodCondition } from '../../../src/kube/types.ts';
import { sandbox } from '../support.ts';

export interface Sample {
  at: number;
  pod: Pod;
  step: InPlaceStep;
}

export interface Written {
  kind: InPlaceStep['kind'];
  sentAt: number;
  doneAt: number;
  step: InPlaceStep;
}

export interface Drive {
  samples: Sample[];
  writes: Written[];
  conflicts: number;
  final: Pod;
}

export const cond = (pod: Pod, type: string): PodCondition | undefined => pod.status?.conditions?.find((c) => c.type === type);
export const cs = (pod: Pod, name: string) => pod.status?.containerStatuses?.find((s) => s.name === name);
export const isReady = (pod: Pod): boolean => pod.status?.phase === 'Running' && cond(pod, 'Ready')?.status === 'True';

export function getPod(ns: string, name: string): Promise<Pod> {
  return sandbox().rest.get<Pod>(core('pods', ns, name));
}

export function waitPod(ns: string, name: string, what: string, check: (p: Pod) => boolean, timeoutMs = 30_000): Promise<Pod> {
  return waitFor(
    async () => {
      const p = await getPod(ns, name);
      return check(p) ? p : undefined;
    },
    { timeoutMs, intervalMs: 50, what: `pod ${ns}/${name} ${what}` },
  );
}

/**
 * Creates a pod as the App planner would under an in-place policy (readiness gate, revision label), sets the
 * gate True right after creation, and waits until it is Running and Ready.
 */
export async function createGatedPod(
  ns: string,
  name: string,
  spec: Record<string, unknown>,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<Pod> {
  const { rest } = sandbox();
  const labels = { ...(meta.labels ?? {}), [Label.revision]: 'web-a' };
  const metadata = { name, labels, ...(meta.annotations ? { annotations: meta.annotations } : {}) };
  await rest.create<Pod>(core('pods', ns), { apiVersion: 'v1', kind: 'Pod', metadata, spec: { ...spec, readinessGates: [{ conditionType: IN_PLACE_GATE }] } });
  // The kubelet writes status meanwhile: a 409 means re-read and try again, as the worker's queue would.
  await waitFor(
    async () => {
      try {
        return await markGateReady(rest, await getPod(ns, name), new Date());
      } catch (err) {
        if (isKubeError(err, 'Conflict')) return undefined;
        throw err;
      }
    },
    { timeoutMs: 10_000, intervalMs: 10, what: `gate of ${name} set` },
  );
  return waitPod(ns, name, 'Running and Ready', isReady);
}

export async function driveInPlace(ns: string, name: string, target: InPlaceTarget, opts: { pollMs?: number; timeoutMs?: number } = {}): Promise<Drive> {
  const { rest } = sandbox();
  const out: Drive = { samples: [], writes: [], conflicts: 0, final: await getPod(ns, name) };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const pod = await getPod(ns, name);
    const step = nextInPlaceStep(pod, target, new Date());
    out.samples.push({ at: Date.now(), pod, step });
    out.final = pod;
    if (step.kind === 'done') return out;
    const wait = stepWait(step);
    if (wait) {
      // A `wait` is a timer: sleep it out. A `waitRunning` ends with a pod watch event: poll instead.
      await sleep(step.kind === 'wait' ? wait.afterMs : Math.min(wait.afterMs, opts.pollMs ?? 50));
      continue;
    }
    const sentAt = Date.now();
    try {
      await applyInPlaceStep(rest, pod, step);
      out.writes.push({ kind: step.kind, sentAt, doneAt: Date.now(), step });
    } catch (err) {
      if (!isKubeError(err, 'Conflict')) throw err;
      out.conflicts++;
    }
  }
  throw new Error(`in-place update of ${ns}/${name} did not finish; last step ${JSON.stringify(out.samples.at(-1)?.step)}`);
}
