/**
 * Keeps the simulated kubelet honest: the same in-place image update on a simulated node and on the real node
 * must leave the pod status fields ebb or a user reads the same — phases, the order the gate, ContainersReady
 * and Ready changed in, the condition types, and per container restartCount, imageID, containerID, lastState,
 * startedAt and reported resources.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { createApp, isSettled, patchApp, settled, uniqueName, until, useController } from '../integration/app/harness.ts';
import { gateOf, isAnnotated, recordPods } from '../integration/app/pod-history.ts';
import { sandbox } from '../integration/support.ts';
import { traceOf, type Trace } from './differential.ts';
import { deleteApp, mainContainer, onRealNode, sidecar } from './support.ts';

const ctl = useController('rn-diff');

const resources = { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '500m', memory: '64Mi' } };

function spec(name: string, tag: 'v1' | 'v2', placement: Record<string, unknown>): Partial<AppSpec> {
  return {
    replicas: 1,
    template: {
      metadata: { labels: { app: name } },
      spec: { ...placement, containers: [mainContainer(tag, { resources }), { ...sidecar(), resources }], terminationGracePeriodSeconds: 1 },
    },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
  };
}

/** Runs the scenario on the nodes `placement` selects and returns the trace of its pod. */
async function scenario(label: string, placement: Record<string, unknown>): Promise<Trace> {
  const name = uniqueName(label);
  await createApp(ctl.ns, name, spec(name, 'v1', placement));
  await settled(ctl.ns, name, undefined, 90_000);
  const history = await recordPods(ctl.ns, name);
  await patchApp(ctl.ns, name, { template: spec(name, 'v2', placement).template });
  await until(ctl.ns, name, (s) => s.app.metadata.generation === 2 && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True'), {
    timeoutMs: 90_000,
  });
  await history.stop();
  await deleteApp(ctl.ns, name);
  return traceOf(history.of(`${name}-0`));
}

describe('simulated vs real kubelet', () => {
  it('an in-place image update leaves the same pod status on both', async () => {
    const simNode = sandbox().nodeNames[0] ?? '';
    const sim = await scenario('dsim', { nodeSelector: { 'kubernetes.io/hostname': simNode } });
    const real = await scenario('dreal', onRealNode);
    process.stdout.write(`simulated: ${JSON.stringify(sim)}\nreal:      ${JSON.stringify(real)}\n`);
    expect(sim.containers).toEqual(real.containers);
    expect(sim.phases).toEqual(real.phases);
    expect(sim.conditionTypes).toEqual(real.conditionTypes);
    expect(sim.steps).toEqual(real.steps);
  });
});
