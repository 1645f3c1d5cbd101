/**
 * Keeps the simulated kubelet honest beyond in-place updates: a pod recreated by a rollout starts the same way on
 * a simulated node and on the real node (phases, final conditions, the condition types seen, and what its
 * containers report), and a resize larger than the node is refused the same way (`PodResizePending` with reason
 * `Infeasible`, the same message but for the node's numbers).
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import type { Pod, PodCondition } from '../../src/kube/types.ts';
import { waitFor } from '../../src/common/wait.ts';
import { createApp, patchApp, settled, uniqueName, until, useController } from '../integration/app/harness.ts';
import { recordPods } from '../integration/app/pod-history.ts';
import { sandbox } from '../integration/support.ts';
import { traceOf, type Trace } from './differential.ts';
import { deleteApp, isReady, mainContainer, onRealNode, sidecar } from './support.ts';

const ctl = useController('rn-dstart');

const simPlacement = (): Record<string, unknown> => ({ nodeSelector: { 'kubernetes.io/hostname': sandbox().nodeNames[0] ?? '' } });

function spec(name: string, tag: 'v1' | 'v2', cpu: string, placement: Record<string, unknown>, policy: 'ReCreate' | 'InPlaceOnly'): Partial<AppSpec> {
  const resources = { requests: { cpu, memory: '32Mi' }, limits: { memory: '64Mi' } };
  return {
    replicas: 1,
    template: {
      metadata: { labels: { app: name } },
      spec: { ...placement, containers: [mainContainer(tag, { resources }), { ...sidecar(), resources }], terminationGracePeriodSeconds: 1 },
    },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy } },
  };
}

/** v1 → v2 by recreation on the nodes `placement` selects: the trace of the new pod, from its creation to Ready. */
async function recreated(label: string, placement: Record<string, unknown>): Promise<Trace> {
  const name = uniqueName(label);
  await createApp(ctl.ns, name, spec(name, 'v1', '50m', placement, 'ReCreate'));
  const before = await settled(ctl.ns, name, undefined, 90_000);
  const oldUid = before.pods[0]?.metadata.uid;
  const history = await recordPods(ctl.ns, name);
  await patchApp(ctl.ns, name, { template: spec(name, 'v2', '50m', placement, 'ReCreate').template });
  const after = await until(ctl.ns, name, (s) => s.pods.length === 1 && s.pods.every((p) => p.metadata.uid !== oldUid && isReady(p)), {
    timeoutMs: 90_000,
    what: `App ${name} recreated at v2`,
  });
  const fresh = after.pods[0] as Pod;
  const rv = fresh.metadata.resourceVersion;
  const versions = () => history.of(`${name}-0`).filter((s) => s.pod.metadata.uid === fresh.metadata.uid);
  await waitFor(() => (versions().some((v) => v.pod.metadata.resourceVersion === rv) ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 50,
    what: `the watch delivering ${name}-0 at ${rv ?? ''}`,
  });
  await history.stop();
  await deleteApp(ctl.ns, name);
  return traceOf(versions());
}

/** A cpu request of 64 cores, more than any node here has, patched in place: the pod's PodResizePending condition. */
async function infeasible(label: string, placement: Record<string, unknown>): Promise<PodCondition> {
  const name = uniqueName(label);
  await createApp(ctl.ns, name, spec(name, 'v1', '50m', placement, 'InPlaceOnly'));
  await settled(ctl.ns, name, undefined, 90_000);
  await patchApp(ctl.ns, name, { template: spec(name, 'v1', '64', placement, 'InPlaceOnly').template });
  const pending = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'PodResizePending' && c.status === 'True');
  const held = await until(ctl.ns, name, (s) => s.pods.some((p) => pending(p) !== undefined), { timeoutMs: 90_000, what: `App ${name}: resize pending` });
  await deleteApp(ctl.ns, name);
  return pending(held.pods[0] as Pod) as PodCondition;
}

/** The message without the node's figures. */
const shape = (message: string | undefined): string => (message ?? '').replace(/\d+/g, 'N');

describe('simulated vs real kubelet, beyond in place', () => {
  it('a pod recreated by a rollout starts the same way on both', async () => {
    const sim = await recreated('dnewsim', simPlacement());
    const real = await recreated('dnewreal', onRealNode);
    process.stdout.write(`recreated simulated: ${JSON.stringify(sim)}\nrecreated real:      ${JSON.stringify(real)}\n`);
    expect(real.phases.at(-1)).toBe('Running');
    expect(sim.phases).toEqual(real.phases);
    expect(sim.conditionTypes).toEqual(real.conditionTypes);
    expect(sim.otherConditionsSeen).toEqual(real.otherConditionsSeen);
    expect(sim.containers).toEqual(real.containers);
  });

  it('a resize larger than the node is Infeasible on both, with the same message', async () => {
    const sim = await infeasible('dinfsim', simPlacement());
    const real = await infeasible('dinfreal', onRealNode);
    process.stdout.write(`infeasible simulated: ${JSON.stringify(sim)}\ninfeasible real:      ${JSON.stringify(real)}\n`);
    expect(real.reason).toBe('Infeasible');
    expect(sim.reason).toBe(real.reason);
    expect(shape(sim.message)).toBe(shape(real.message));
    expect(sim.lastProbeTime ?? null).not.toBeNull();
    expect(real.lastProbeTime ?? null).not.toBeNull();
  });
});
