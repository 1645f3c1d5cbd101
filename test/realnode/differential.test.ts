/**
 * Keeps the simulated kubelet honest: the same in-place image update on a simulated node and on the real node
 * must leave the pod status fields ebb or a user reads the same — phases, the order the gate, ContainersReady
 * and Ready changed in, the condition types, whether the kubelet reported the patched spec's generation before
 * the restart (ebb releases the gate on it), and per container restartCount, imageID, containerID, lastState,
 * startedAt and reported resources. A last case runs the simulated side on a node with the benchmarks' calibrated
 * profile, whose gate delay the fast test timings do not have: the status that first reports the image patch
 * must compute Ready from the gate as it is on both.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import type { Pod } from '../../src/kube/types.ts';
import { waitFor } from '../../src/common/wait.ts';
import { createApp, isSettled, patchApp, settled, uniqueName, until, useController } from '../integration/app/harness.ts';
import { gateOf, isAnnotated, recordPods } from '../integration/app/pod-history.ts';
import { sandbox } from '../integration/support.ts';
import { realisticProfile } from '../../harness/sandbox/node/timings.ts';
import { startDedicatedNode } from '../integration/imagelist/dedicated-node.ts';
import { traceOf, type Trace } from './differential.ts';
import { deleteApp, mainContainer, onRealNode, sidecar } from './support.ts';

const ctl = useController('rn-diff');

type Variant = { tag: 'v1' | 'v2'; cpu: string };

function spec(name: string, v: Variant, placement: Record<string, unknown>): Partial<AppSpec> {
  const resources = { requests: { cpu: v.cpu, memory: '32Mi' }, limits: { cpu: '500m', memory: '64Mi' } };
  return {
    replicas: 1,
    template: {
      metadata: { labels: { app: name } },
      spec: { ...placement, containers: [mainContainer(v.tag, { resources }), { ...sidecar(), resources }], terminationGracePeriodSeconds: 1 },
    },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
  };
}

/** Runs the update `from` → `to` on the nodes `placement` selects and returns the trace of its pod. */
async function scenario(label: string, placement: Record<string, unknown>, from: Variant, to: Variant): Promise<Trace> {
  const name = uniqueName(label);
  await createApp(ctl.ns, name, spec(name, from, placement));
  const before = await settled(ctl.ns, name, undefined, 90_000);
  // startedAt has whole seconds: a restart within the second of the first start would read as "same" on a fast
  // simulated node, where the real kubelet takes longer. The update starts once that second is over.
  const started = Math.max(
    0,
    ...before.pods.flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => Date.parse(c.state?.running?.startedAt ?? '') || 0)),
  );
  await waitFor(() => (Date.now() >= started + 1_000 ? true : undefined), { timeoutMs: 5_000, intervalMs: 50, what: 'the second of the first start over' });
  const history = await recordPods(ctl.ns, name);
  await patchApp(ctl.ns, name, { template: spec(name, to, placement).template });
  // Settled, and the kubelet done with any resize (ebb may call the rollout complete a moment before).
  const resizing = (p: Pod): boolean => p.status?.conditions?.some((c) => c.type.startsWith('PodResize') && c.status === 'True') ?? false;
  const final = await until(
    ctl.ns,
    name,
    (s) => s.app.metadata.generation === 2 && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True' && !resizing(p)),
    { timeoutMs: 90_000 },
  );
  // The watch may trail the poll: stop recording once it has delivered the version the poll saw.
  const rv = final.pods[0]?.metadata.resourceVersion;
  await waitFor(() => (history.of(`${name}-0`).some((v) => v.pod.metadata.resourceVersion === rv) ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 50,
    what: `the watch delivering ${name}-0 at ${rv ?? ''}`,
  });
  await history.stop();
  await deleteApp(ctl.ns, name);
  return traceOf(history.of(`${name}-0`));
}

const simPlacement = (): Record<string, unknown> => ({ nodeSelector: { 'kubernetes.io/hostname': sandbox().nodeNames[0] ?? '' } });

/** Runs the update on a simulated node, then on the real node, and compares the traces. */
async function compare(label: string, from: Variant, to: Variant): Promise<Trace> {
  const sim = await scenario(`${label}sim`, simPlacement(), from, to);
  const real = await scenario(`${label}real`, onRealNode, from, to);
  process.stdout.write(`${label} simulated: ${JSON.stringify(sim)}\n${label} real:      ${JSON.stringify(real)}\n`);
  expect(sim.containers).toEqual(real.containers);
  expect(sim.phases).toEqual(real.phases);
  expect(sim.conditionTypes).toEqual(real.conditionTypes);
  expect(sim.otherConditionsSeen).toEqual(real.otherConditionsSeen);
  expect(sim.steps).toEqual(real.steps);
  expect(sim.observedBeforeRestart).toEqual(real.observedBeforeRestart);
  return real;
}

describe('simulated vs real kubelet', () => {
  it('an in-place image update leaves the same pod status on both', async () => {
    const real = await compare('dimg', { tag: 'v1', cpu: '50m' }, { tag: 'v2', cpu: '50m' });
    expect(real.observedBeforeRestart).toBe(true);
  });

  it('an in-place cpu resize leaves the same pod status on both', async () => {
    await compare('dcpu', { tag: 'v1', cpu: '50m' }, { tag: 'v1', cpu: '100m' });
  });

  it('on the calibrated profile, the status that first reports an image patch reads the gate as it is', async () => {
    // The profile's 2 s gate delay: a simulator that applied it to every sync reported Ready on the old container.
    const node = await startDedicatedNode({ prefix: 'rn-cal', index: 46, timings: { ...realisticProfile, pullMs: 300 } });
    try {
      const sim = await scenario('dcalsim', node.placement, { tag: 'v1', cpu: '50m' }, { tag: 'v2', cpu: '50m' });
      const real = await scenario('dcalreal', onRealNode, { tag: 'v1', cpu: '50m' }, { tag: 'v2', cpu: '50m' });
      process.stdout.write(`dcal simulated (calibrated): ${JSON.stringify(sim)}\ndcal real:                   ${JSON.stringify(real)}\n`);
      expect(real.readyWhenObserved).toBe('F');
      expect(sim.readyWhenObserved).toEqual(real.readyWhenObserved);
      expect(sim.observedBeforeRestart).toEqual(real.observedBeforeRestart);
    } finally {
      await node.stop();
    }
  });
});
