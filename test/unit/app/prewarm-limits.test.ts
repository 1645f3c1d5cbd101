/**
 * Scenario tests of the pre-warm limits: the real planner and executor on the fake apiserver. Pod `web-<i>` runs on
 * node `node-<i>`; the tests play the node daemon by setting image phases, and move the clock.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { getOrdinal } from '../../../src/workers/app/pods/predicates.ts';
import { Scenario } from './scenario.ts';

const image = (tag: string) => `registry.example/web:${tag}`;
const template = (tag: string) => ({ template: { spec: { containers: [{ name: 'main', image: image(tag) }] } } });
const MANAGER = 'ebb-prewarm/ns/web';
const HOUR = 3_600_000;

function schedule(s: Scenario): void {
  for (const [k, pod] of s.cluster.pods) {
    if (!pod.spec?.['nodeName']) s.cluster.pods.set(k, { ...pod, spec: { ...pod.spec, nodeName: `node-${getOrdinal('web', pod.metadata.name)}` } });
  }
}

async function run(s: Scenario, done: (s: Scenario) => boolean, max = 200): Promise<void> {
  for (let i = 0; i < max; i++) {
    schedule(s);
    await s.step();
    if (done(s)) return;
  }
  throw new Error(`no convergence; status ${JSON.stringify(s.app().status)}`);
}

function requested(s: Scenario): string[] {
  return s.cluster.imageLists.names().filter((n) => Object.values(s.cluster.imageLists.owners(n)).some((m) => m.includes(MANAGER)));
}

const condition = (s: Scenario) => s.app().status?.conditions?.find((c) => c.type === 'ImagesPrewarmed');
const same = (want: string[]) => (s: Scenario) => JSON.stringify(requested(s)) === JSON.stringify(want);

async function pausedRollout(spec: Partial<AppSpec>): Promise<Scenario> {
  const s = new Scenario({ replicas: 4, podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } }, ...spec });
  await run(s, (x) => x.converged());
  s.edit(template('v2'));
  return s;
}

describe('pre-warm limits', () => {
  it('a node whose daemon defers the pull for disk gives its slot to the next node; the condition says where and why', async () => {
    const s = await pausedRollout({ imagePrewarm: { enabled: true, parallelism: 1 } });
    await run(s, same(['node-3']), 5);
    await s.step();
    expect(requested(s)).toEqual(['node-3']);

    s.cluster.imageLists.setPhase('node-3', image('v2'), 'Deferred', 'image filesystem /var/lib/containerd is 83% used');
    await run(s, same(['node-2', 'node-3']), 5);
    s.cluster.imageLists.setPhase('node-2', image('v2'), 'Pulled');
    await run(s, same(['node-1', 'node-2', 'node-3']), 5);
    expect(condition(s)?.message).toContain('deferred for disk on node-3 (image filesystem /var/lib/containerd is 83% used)');
  });

  it('a rollout paused past the pin limit removes its entries, and requests them again once it goes on', async () => {
    const s = await pausedRollout({ imagePrewarm: { enabled: true } });
    await run(s, same(['node-0', 'node-1', 'node-2', 'node-3']), 5);
    const paused = s.app().status?.conditions?.find((c) => c.type === 'Paused');
    expect(paused?.status).toBe('True');

    s.clock.advance(24 * HOUR + 1_000);
    await run(s, same([]), 5);
    expect(condition(s)).toMatchObject({ status: 'False', reason: 'PrewarmUnpinned' });
    expect(s.app().status?.prewarm).toBeUndefined();
    // It stays so while the pause lasts.
    await s.step();
    expect(requested(s)).toEqual([]);

    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await run(s, (x) => requested(x).length > 0, 10);
    expect(condition(s)?.reason).not.toBe('PrewarmUnpinned');
  });
});
