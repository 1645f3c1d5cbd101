/**
 * The watcher enqueues a pod event only when something a plan reads changed (`src/watcher/pod-digest.ts`).
 * With the periodic resync off, so that nothing but the filtered events can bring an App back, Apps still
 * converge where each step waits on one pod event: an OrderedReady scale-up (each next pod is created only
 * once the previous one is Ready), a recreate rollout (a pod gone, then Ready), and an in-place update (each
 * step waits on the pod's container restart and readiness). Meanwhile the watcher did leave out pod events
 * (the kubelet's intermediate status patches, ebb's own creates and deletes), which the metric shows.
 * A pod recreated without a claim read (its claims are taken as kept) whose claim was deleted meanwhile is
 * unschedulable; that brings its App back, which creates the claim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { createLogger } from '../../../src/common/log.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { httpGet, metricValue } from '../watcher/helpers.ts';
import { claimsIn, controllerEnv, createApp, image, isSettled, patchApp, settled, template, uniqueName, until, type Snapshot } from './harness.ts';
import { core } from '../../../src/kube/paths.ts';
import { imagesOf, statusesOf } from './pod-history.ts';
import type { Pod } from '../../../src/kube/types.ts';

const restartsOf = (p: Pod | undefined): number => (p ? (statusesOf(p)[0]?.restartCount ?? -1) : -1);

let ns = '';
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;

beforeAll(async () => {
  ns = await freshNamespace('podfilter');
  // No periodic resync: only watch events bring an App back.
  const env = controllerEnv(ns, { EBB_RESYNC_PERIOD: '0' });
  const log = createLogger('it-podfilter', 'warn');
  watcher = await startWatcher(parseWatcherConfig(env), log);
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
});

afterAll(async () => {
  await worker?.stop();
  await watcher?.stop();
});

/** Pod events the watcher left out because nothing a plan reads changed. */
async function ignoredPodEvents(): Promise<number> {
  const port = watcher?.httpPort ?? 0;
  return metricValue((await httpGet(port, '/metrics')).body, 'ebb_watch_events_ignored_total', { resource: 'pods', reason: 'unread-fields' });
}

const atGeneration = (generation: number) => (s: Snapshot) => s.app.metadata.generation === generation && isSettled(s);

describe('pod events left out by the watcher', () => {
  it('an OrderedReady scale-up 0 → 4 moves on at each pod becoming Ready', async () => {
    const name = uniqueName('ord');
    const before = await ignoredPodEvents();
    await createApp(ns, name, { replicas: 0, podManagementPolicy: 'OrderedReady' });
    await settled(ns, name);
    await patchApp(ns, name, { replicas: 4 });
    const s = await until(ns, name, atGeneration(2), { timeoutMs: 60_000, what: 'scaled up to 4' });
    expect(s.pods.map((p) => p.metadata.name)).toEqual([0, 1, 2, 3].map((i) => `${name}-${i}`));
    expect(s.app.status).toMatchObject({ replicas: 4, readyReplicas: 4, availableReplicas: 4 });
    // Each pod went through several status patches that no plan reads (scheduled, running but not ready).
    expect(await ignoredPodEvents()).toBeGreaterThan(before);
  });

  it('a recreate rollout of 3 replicas completes on pod-gone and pod-Ready events', async () => {
    const name = uniqueName('rec');
    await createApp(ns, name, { replicas: 3 });
    await settled(ns, name);
    const before = await ignoredPodEvents();
    await patchApp(ns, name, { template: template(name, 'v2') });
    const s = await until(ns, name, atGeneration(2), { timeoutMs: 60_000, what: 'rolled out to v2' });
    expect(s.pods.map(imagesOf)).toEqual(s.pods.map(() => [image('v2')]));
    expect(s.app.status?.currentRevision).toBe(s.app.status?.updateRevision);
    expect(await ignoredPodEvents()).toBeGreaterThan(before);
  });

  it('an in-place update of 2 replicas finishes each pod on its container restart and readiness', async () => {
    const name = uniqueName('inp');
    const spec: Partial<AppSpec> = { replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } };
    await createApp(ns, name, spec);
    const old = await settled(ns, name);
    await patchApp(ns, name, { template: template(name, 'v2') });
    const s = await until(ns, name, atGeneration(2), { timeoutMs: 60_000, what: 'updated in place to v2' });
    for (const [i, pod] of s.pods.entries()) {
      // Same pod (uid), its container restarted once with the new image.
      expect(pod.metadata.uid).toBe(old.pods[i]?.metadata.uid);
      expect(restartsOf(pod)).toBe(restartsOf(old.pods[i]) + 1);
      expect(imagesOf(pod)).toEqual([image('v2')]);
    }
  });

  it('a claim deleted while its pod ran: the replacement is unschedulable until its App creates the claim again', async () => {
    const name = uniqueName('pvc');
    const volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
    await createApp(ns, name, { replicas: 1, volumeClaimTemplates });
    const old = await settled(ns, name);
    const { rest } = sandbox();
    const claim = `data-${name}-0`;
    const oldClaim = (await claimsIn(ns)).find((c) => c.metadata.name === claim);
    // The claim is in use: it stays (terminating) until its pod is gone, then goes.
    await rest.delete(core('persistentvolumeclaims', ns, claim));
    await rest.delete(core('pods', ns, `${name}-0`));
    const s = await until(ns, name, (x) => isSettled(x) && x.pods[0]?.metadata.uid !== old.pods[0]?.metadata.uid, {
      timeoutMs: 60_000,
      what: 'the pod recreated with a new claim',
    });
    const newClaim = (await claimsIn(ns)).find((c) => c.metadata.name === claim);
    expect(newClaim?.metadata.uid).toBeDefined();
    expect(newClaim?.metadata.uid).not.toBe(oldClaim?.metadata.uid);
    expect(s.pods[0]?.spec?.['nodeName']).toBeTruthy();
  });
});
