/**
 * Upstream's e2e scenario "should perform rolling updates and roll backs of template modifications" (with and
 * without claims), replayed on an App with the real watcher and worker: with pod 1 not ready at the stable
 * revision, a template change moves no pod until pod 1 is ready again (upstream halts; a pod unready at the
 * stable revision is not a stuck rollout, so the revert-heals rule leaves it alone); then the rollout
 * completes, and the same happens rolling back to the previous image.
 *
 * Upstream breaks a pod's HTTP readiness probe; the sandbox's kubelet runs no probes, so the template carries
 * a readiness gate this file's prober sets: True on every pod except those it was told to break (by UID).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { sandbox } from '../support.ts';
import { createApp, image, patchApp, podsOf, revisionOf, settled, type Snapshot, uniqueName, until, useController } from './harness.ts';

const ctl = useController('heal');
const GATE = 'test.ebb.dev/probe';
const claims = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];

const gated = (name: string, tag: string): AppSpec['template'] => ({
  metadata: { labels: { app: name } },
  spec: { containers: [{ name: 'main', image: image(tag) }], readinessGates: [{ conditionType: GATE }], terminationGracePeriodSeconds: 1 },
});

/** Sets the gate of every pod of `name`: False for a UID in `broken`, else True; runs until stopped. */
function prober(name: string): { broken: Set<string>; stop: () => Promise<void> } {
  const broken = new Set<string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const pod of await podsOf(ctl.ns, name).catch(() => [] as Pod[])) {
        const want = broken.has(pod.metadata.uid ?? '') ? 'False' : 'True';
        const have = pod.status?.conditions?.find((c) => c.type === GATE)?.status;
        if (have === want || pod.metadata.deletionTimestamp || !pod.metadata.name) continue;
        const patch = { status: { conditions: [{ type: GATE, status: want, lastTransitionTime: new Date().toISOString() }] } };
        await sandbox()
          .rest.patch(core('pods', ctl.ns, pod.metadata.name, 'status'), patch, PatchType.strategic)
          .catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    broken,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

const pod1 = (s: Snapshot, name: string) => s.pods.find((p) => p.metadata.name === `${name}-1`);

let stopProber: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopProber?.();
  stopProber = undefined;
});

describe.each([
  ['without claims', {}],
  ['with claims', { volumeClaimTemplates: claims }],
] as const)('upstream: rolling updates and roll backs of template modifications (%s)', (_label, extra) => {
  it('halts while pod 1 is not ready at the stable revision, then rolls forward, and back the same way', async () => {
    const name = uniqueName('heal');
    const probe = prober(name);
    stopProber = probe.stop;
    await createApp(ctl.ns, name, { replicas: 3, template: gated(name, 'v1'), ...extra });
    const first = await settled(ctl.ns, name, undefined, 90_000);

    /** Breaks pod 1, changes the image, and checks that nothing moves until pod 1 is ready again; then the rollout completes. */
    const roll = async (from: Snapshot, tag: string): Promise<Snapshot> => {
      const stable = from.app.status?.updateRevision ?? '';
      const uid = pod1(from, name)?.metadata.uid ?? '';
      probe.broken.add(uid);
      await until(ctl.ns, name, (s) => pod1(s, name)?.metadata.uid === uid && !isRunningAndReady(pod1(s, name)!), { what: 'pod 1 not ready' });
      const generation = (await patchApp(ctl.ns, name, { template: gated(name, tag) })).metadata.generation;
      // The worker has planned on the new template: the plan that saw it would have moved pods already.
      const seen = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === generation && s.app.status?.updateRevision !== stable, {
        what: 'the new template seen',
      });
      expect(seen.app.status?.currentRevision).toBe(stable);
      expect(pod1(seen, name)?.metadata.uid).toBe(uid);
      expect(seen.pods.every((p) => revisionOf(p) === stable && !p.metadata.deletionTimestamp)).toBe(true);
      probe.broken.delete(uid);
      return settled(ctl.ns, name, seen.app.status?.updateRevision, 90_000);
    };

    const forward = await roll(first, 'v2');
    expect(forward.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v2'))).toBe(true);
    const back = await roll(forward, 'v1');
    expect(back.app.status?.updateRevision).toBe(first.app.status?.updateRevision);
    expect(back.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v1'))).toBe(true);
  });
});
