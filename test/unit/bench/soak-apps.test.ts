/** The soak's App model: seeded edits replay exactly, and the convergence check names what is missing. */
import { describe, expect, it } from 'vitest';
import type { App } from '../../../src/api/app.ts';
import { Label } from '../../../src/api/keys.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { imageOf, notConverged, planApps, randomEdit, rng, type SoakApp } from '../../../bench/lib/soak-apps.ts';

function appAt(a: SoakApp, over: Partial<NonNullable<App['status']>> = {}): App {
  const n = a.replicas;
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name: a.name, namespace: a.namespace, generation: 3 },
    spec: { replicas: n, selector: {}, template: { spec: { containers: [{ name: 'main', image: imageOf(a) }] } } },
    status: { observedGeneration: 3, replicas: n, readyReplicas: n, updatedReplicas: n, currentRevision: 'r2', updateRevision: 'r2', ...over },
  };
}

function podAt(a: SoakApp, i: number, revision = 'r2', image = imageOf(a)): Pod {
  return {
    metadata: { name: `${a.name}-${i}`, labels: { [Label.revision]: revision } },
    spec: { containers: [{ name: 'main', image }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

describe('soak App model', () => {
  it('the same seed plans the same Apps and the same edits', () => {
    const run = (): string[] => {
      const r = rng(42);
      const apps = planApps(10, ['a', 'b'], r);
      return Array.from({ length: 50 }, (_, i) => `${randomEdit(apps[i % 10]!, r)} ${JSON.stringify(apps[i % 10])}`);
    };
    expect(run()).toEqual(run());
  });

  it('scale edits stay within 1–3 replicas and always change the count', () => {
    const r = rng(7);
    const [a] = planApps(1, ['ns'], r);
    for (let i = 0; i < 500; i++) {
      const before = a!.replicas;
      if (randomEdit(a!, r) === 'scale') expect(a!.replicas).not.toBe(before);
      expect(a!.replicas).toBeGreaterThanOrEqual(1);
      expect(a!.replicas).toBeLessThanOrEqual(3);
    }
  });

  it('converged only when status and every pod are at the last spec', () => {
    const [a] = planApps(1, ['ns'], rng(1));
    a!.replicas = 2;
    const pods = [podAt(a!, 0), podAt(a!, 1)];
    expect(notConverged(a!, appAt(a!), pods)).toEqual([]);
    expect(notConverged(a!, undefined, pods)).toEqual(['App missing']);
    expect(notConverged(a!, appAt(a!, { observedGeneration: 2 }), pods)).toEqual(['observedGeneration 2 of 3']);
    expect(notConverged(a!, appAt(a!, { currentRevision: 'r1' }), pods)).toEqual(['currentRevision r1 != updateRevision r2']);
    expect(notConverged(a!, appAt(a!), [pods[0]!])).toEqual(['1 live pods (0 terminating), want 2']);
    expect(notConverged(a!, appAt(a!), [pods[0]!, podAt(a!, 1, 'r1')])).toEqual([`pods not updated and ready: ${a!.name}-1`]);
    const before = appAt(a!);
    a!.tag++;
    expect(notConverged(a!, before, pods)).toContain('spec differs from the last edit');
    expect(notConverged(a!, before, pods)).toContain(`pods not updated and ready: ${a!.name}-0,${a!.name}-1`);
  });
});
