/**
 * The pod worker (executor) with fake seams: a pod API that records patches and deletions (and can fail),
 * an event sink that records events, a real image store on a simulated registry, short real delays.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { createLogger } from '../../../src/common/log.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { PodIPPool } from './addresses.ts';
import { ImageStore, SimRegistry } from './image-store.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import { delayFn, serialSlot, type NodeContext } from './node-context.ts';
import type { PodApi, PodEvent } from './pod-api.ts';
import { PodWorker } from './pod-worker.ts';
import type { StatusPatch } from './status-patch.ts';
import { defaultFaults, defaultTimings, type KubeletTimings } from './timings.ts';
import { testPod } from './test-fixtures.ts';

class FakePodApi implements PodApi {
  patches: StatusPatch[] = [];
  deleted: Stored<Pod>[] = [];
  /** Makes the Nth patch (1-based) fail with this error. */
  failPatch: { n: number; err: Error } | undefined;
  live: Stored<Pod> | undefined;
  private rv = 100;

  patchStatus(_pod: Stored<Pod>, patch: StatusPatch): Promise<string> {
    this.patches.push(patch);
    if (this.failPatch?.n === this.patches.length) return Promise.reject(this.failPatch.err);
    return Promise.resolve(String(++this.rv));
  }
  deletePod(pod: Stored<Pod>): Promise<void> {
    this.deleted.push(pod);
    return Promise.resolve();
  }
  getPod(): Promise<Stored<Pod> | undefined> {
    return Promise.resolve(this.live);
  }
  claimPhase(): Promise<string | undefined> {
    return Promise.resolve('Bound');
  }
  last(): Record<string, unknown> {
    return this.patches.at(-1)?.status ?? {};
  }
}

const fast: KubeletTimings = { ...defaultTimings, pullMs: 30, sandboxMs: 5, startMs: 5, readyMs: 20, terminationGraceCapMs: 20 };

function context(api: FakePodApi, events: PodEvent[], lifetime: AbortSignal, store?: ImageStore, t: KubeletTimings = fast): NodeContext {
  return {
    name: 'sim-node-0',
    hostIP: '127.0.1.1',
    store: store ?? new ImageStore({ registry: new SimRegistry(), pullMs: () => fast.pullMs }),
    timings: () => t,
    faults: () => defaultFaults,
    api,
    events: { record: (_pod, e) => events.push(e) },
    ips: new PodIPPool(0),
    capacity: () => ({ allocatable: { cpu: '4', memory: '8Gi' }, otherPodsRequests: [] }),
    pullSlot: serialSlot(() => true),
    log: createLogger('test', 'silent'),
    now: Date.now,
    delay: delayFn,
    lifetime,
  };
}

function phaseOf(api: FakePodApi): unknown {
  return api.last().phase;
}

function readyOf(api: FakePodApi): unknown {
  return (api.last().conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === 'Ready')?.status;
}

describe('PodWorker', () => {
  const node = new AbortController();
  afterEach(() => node.abort());

  it('brings a pod to Running and Ready with a few status writes, then stays quiet', async () => {
    const api = new FakePodApi();
    const events: PodEvent[] = [];
    const pod = testPod({ containers: [{ name: 'app', image: 'nginx:1.25', readinessProbe: {} }] });
    const w = new PodWorker(pod, context(api, events, node.signal), node.signal);
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    const writes = api.patches.length;
    expect(writes).toBeLessThanOrEqual(4);
    expect(phaseOf(api)).toBe('Running');
    await new Promise((r) => setTimeout(r, 100));
    expect(api.patches.length).toBe(writes);
    expect(events.map((e) => e.reason)).toEqual(['Pulling', 'Pulled', 'Created', 'Started']);
    w.stop();
    await w.done;
  });

  it('terminates a deleted pod: Killing, a terminal status, then deletion with its UID', async () => {
    const api = new FakePodApi();
    const events: PodEvent[] = [];
    const pod = testPod();
    const w = new PodWorker(pod, context(api, events, node.signal), node.signal);
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    w.update({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2025-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } });
    await w.done;
    expect(w.finished).toBe(true);
    expect(phaseOf(api)).toBe('Succeeded');
    expect(api.deleted.map((p) => p.metadata.uid)).toEqual(['uid-1']);
    expect(events.filter((e) => e.reason === 'Killing').map((e) => e.message)).toEqual(['Stopping container app']);
  });

  it('cancels a slow start when the pod is deleted, without cancelling the shared pull', async () => {
    const api = new FakePodApi();
    const store = new ImageStore({ registry: new SimRegistry(), pullMs: () => 300 });
    const pod = testPod({ containers: [{ name: 'app', image: 'big:1' }] });
    const w = new PodWorker(pod, context(api, [], node.signal, store), node.signal);
    // The worker's pull is under way: the test's pull joins it.
    await waitFor(() => (store.pullRequests >= 1 ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: "the worker's pull" });
    const sharedPull = store.pull('big:1');
    w.update({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2025-01-01T00:00:00Z' } });
    await w.done;
    expect(api.deleted).toHaveLength(1);
    await expect(sharedPull).resolves.toMatchObject({ repoTags: ['docker.io/library/big:1'] });
  });

  it('stops without deleting when its status patch finds the name taken by a new pod', async () => {
    const api = new FakePodApi();
    api.failPatch = { n: 1, err: new KubeError('Conflict', 409, 'Precondition failed: UID') };
    api.live = { ...testPod(), metadata: { ...testPod().metadata, uid: 'uid-2' } };
    const w = new PodWorker(testPod(), context(api, [], node.signal), node.signal);
    await w.done;
    expect(api.patches).toHaveLength(1);
    expect(api.deleted).toHaveLength(0);
  });

  it('rewrites its status when someone else overwrote what it owns', async () => {
    const api = new FakePodApi();
    const pod = testPod();
    const w = new PodWorker(pod, context(api, [], node.signal), node.signal);
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    const n = api.patches.length;
    // The watch echoes our last write, then shows a clobbered phase.
    w.update({ ...pod, metadata: { ...pod.metadata, resourceVersion: String(100 + n) }, status: api.last() });
    w.update({
      ...pod,
      metadata: { ...pod.metadata, resourceVersion: String(200 + n) },
      status: { ...(api.last() as Stored<Pod>['status']), phase: 'Pending' },
    });
    await waitFor(() => (api.patches.length > n ? true : undefined), { timeoutMs: 2_000, intervalMs: 5, what: 'a rewrite' });
    expect(phaseOf(api)).toBe('Running');
    w.stop();
    await w.done;
  });

  it("recomputes Ready readinessGateMs after a gate's condition changed, not at once", async () => {
    const api = new FakePodApi();
    const gate = 'example.com/ready';
    const pod = testPod({ readinessGates: [{ conditionType: gate }] });
    const w = new PodWorker(pod, context(api, [], node.signal, undefined, { ...fast, readinessGateMs: 300 }), node.signal);
    await waitFor(
      () =>
        (api.last().conditions as { type: string; status: string }[] | undefined)?.some((c) => c.type === 'ContainersReady' && c.status === 'True')
          ? true
          : undefined,
      {
        timeoutMs: 5_000,
        intervalMs: 5,
        what: 'containers ready',
      },
    );
    const t0 = Date.now();
    w.update({ ...pod, status: { ...pod.status, conditions: [...(pod.status?.conditions ?? []), { type: gate, status: 'True' }] } });
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    w.stop();
    await w.done;
  });

  it('reads the gates as they are in the sync of an image patch and in the one that reports the restart', async () => {
    const api = new FakePodApi();
    const gate = 'example.com/ready';
    const withGate = (p: Stored<Pod>, status: string): Stored<Pod> => ({
      ...p,
      status: { ...p.status, conditions: [...(p.status?.conditions ?? []).filter((c) => c.type !== gate), { type: gate, status }] },
    });
    const pod = withGate(
      testPod({ readinessGates: [{ conditionType: gate }], containers: [{ name: 'app', image: 'nginx:1.25', readinessProbe: {} }] }),
      'True',
    );
    // A gate delay no wait of this test reaches: only a sync can apply the gate's changes here.
    const w = new PodWorker(pod, context(api, [], node.signal, undefined, { ...fast, stopMs: 200, readinessGateMs: 60_000 }), node.signal);
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    // The in-place protocol: the gate False (status only), then the image patch.
    const out = withGate(pod, 'False');
    w.update(out);
    const patched: Stored<Pod> = {
      ...out,
      metadata: { ...out.metadata, generation: 2 },
      spec: { ...out.spec, containers: [{ name: 'app', image: 'nginx:1.26', readinessProbe: {} }] },
    };
    w.update(patched);
    const observed = await waitFor(() => api.patches.find((p) => p.status['observedGeneration'] === 2), {
      timeoutMs: 5_000,
      intervalMs: 5,
      what: 'generation 2 observed',
    });
    const conditions = observed.status['conditions'] as { type: string; status: string }[];
    const statuses = observed.status['containerStatuses'] as { image: string; ready: boolean }[];
    // The sync acting on the patch reads the gate False: the old container still runs ready, the pod is not Ready.
    expect(statuses.map((c) => [c.image, c.ready])).toEqual([['nginx:1.25', true]]);
    expect(conditions.find((c) => c.type === 'Ready')?.status).toBe('False');
    // The gate released while the container restarts: Ready follows the new container, with no gate delay.
    w.update(withGate(patched, 'True'));
    const newReady = (): true | undefined => {
      const cs = (api.last().containerStatuses as { image: string; ready: boolean }[] | undefined)?.[0];
      return cs?.image === 'nginx:1.26' && cs.ready && readyOf(api) === 'True' ? true : undefined;
    };
    await waitFor(newReady, { timeoutMs: 5_000, intervalMs: 5, what: 'Ready on the new container' });
    expect(
      api.patches.some(
        (p) =>
          p.status['observedGeneration'] === 2 &&
          (p.status['conditions'] as { type: string; status: string }[]).some((c) => c.type === 'Ready' && c.status === 'True') &&
          (p.status['containerStatuses'] as { image: string }[])[0]?.image === 'nginx:1.25',
      ),
    ).toBe(false);
    w.stop();
    await w.done;
  });

  it('removes a deleted pod teardownMs after its containers stopped', async () => {
    const api = new FakePodApi();
    const pod = testPod();
    const w = new PodWorker(pod, context(api, [], node.signal, undefined, { ...fast, teardownMs: 300 }), node.signal);
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    const t0 = Date.now();
    w.update({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2025-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 } });
    await w.done;
    expect(api.deleted).toHaveLength(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it("charges the kubelet's own stopMs on top of the grace when it replaces a container", async () => {
    const api = new FakePodApi();
    const pod = testPod({ terminationGracePeriodSeconds: 0 });
    const w = new PodWorker(pod, context(api, [], node.signal, undefined, { ...fast, stopMs: 300 }), node.signal);
    await waitFor(() => (readyOf(api) === 'True' ? true : undefined), { timeoutMs: 5_000, intervalMs: 5, what: 'Ready' });
    const t0 = Date.now();
    w.update({ ...pod, metadata: { ...pod.metadata, generation: 2 }, spec: { ...pod.spec, containers: [{ name: 'app', image: 'nginx:1.26' }] } });
    const restarted = (): true | undefined => {
      const cs = (api.last().containerStatuses as { image: string; restartCount: number }[] | undefined)?.[0];
      return cs?.image === 'nginx:1.26' && cs.restartCount === 1 ? true : undefined;
    };
    await waitFor(restarted, { timeoutMs: 5_000, intervalMs: 5, what: 'restarted' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    w.stop();
    await w.done;
  });
});
