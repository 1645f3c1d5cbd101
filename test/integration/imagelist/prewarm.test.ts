/**
 * Pre-pulled means no pull: the node daemon (`ebb daemon`, in this process through the sandbox's
 * startNodeDaemons) pulls an image of its node's ImageList into the node's image store through the node's CRI
 * socket; a pod of that image then scheduled onto the node starts without a kubelet pull, the way a real kubelet
 * answers an IfNotPresent image it already holds. A pod of an image nobody pre-pulled is the control: its
 * kubelet pull shows in the same counters and events.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { startNodeDaemons, type NodeDaemon, type NodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { startDedicatedNode, type DedicatedNode } from './dedicated-node.ts';
import { createList, createPod, daemonPulls, deleteList, readList, startEvents, waitImageStatus, waitPodReady } from './helpers.ts';

/** A pull that is not instant, so a kubelet pull would show in the pod's start. */
const PULL_MS = 1_500;
const tag = randomBytes(3).toString('hex');
const WARM = `registry.example.com/prewarm/app:${tag}`;
const COLD = `registry.example.com/prewarm/other:${tag}`;

describe('an image pre-pulled by the node daemon', () => {
  let node: DedicatedNode;
  let daemons: NodeDaemons;
  let daemon: NodeDaemon;
  let ns: string;
  const counters = () => ({ pullCount: node.node.store.pullCount, pullRequests: node.node.store.pullRequests });
  const podSpec = (image: string) => ({ ...node.placement, terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image }] });

  beforeAll(async () => {
    node = await startDedicatedNode({ prefix: 'it-prewarm', index: 40, timings: { pullMs: PULL_MS } });
    daemons = await startNodeDaemons({
      kubeconfig: sandbox().kubeconfig,
      nodes: [node.node],
      log: createLogger('daemon', 'warn'),
      options: { statusFlushMs: 200 },
    });
    daemon = daemons.daemons.get(node.name)!;
    ns = await freshNamespace('prewarm');
  });

  afterAll(async () => {
    await daemons?.stop();
    await deleteList(node?.name ?? '');
    await node?.stop();
  });

  it("is pulled by the node's daemon into the node's image store", async () => {
    expect(counters()).toEqual({ pullCount: 0, pullRequests: 0 });
    const created = await createList(node.name, [{ image: WARM }]);
    const status = await waitImageStatus(node.name, WARM, (s) => s.phase === 'Pulled', 'Pulled');

    const stored = node.node.store.status(WARM);
    expect(stored).toBeDefined();
    expect(status).toMatchObject({ imageRef: stored!.id, attempts: 1, lastPullTime: expect.any(String) as unknown });
    expect((await readList(node.name))?.status?.observedGeneration).toBe(created.metadata.generation);
    // One PullImage through the node's CRI socket, which transferred the image once.
    expect(counters()).toEqual({ pullCount: 1, pullRequests: 1 });
    expect(await daemonPulls(daemon.httpPort)).toBe(1);
  });

  it('lets a pod of that image start on the node without a kubelet pull', async () => {
    const before = counters();
    const t0 = Date.now();
    const pod = await createPod(ns, 'warm', podSpec(WARM));
    const ready = await waitPodReady(ns, 'warm');
    const readyMs = Date.now() - t0;

    expect(ready.spec.nodeName).toBe(node.name);
    expect(ready.status?.containerStatuses?.[0]?.imageID).toBe(node.node.store.status(WARM)!.repoDigests[0]);
    // No PullImage at all: not even a registry round trip.
    expect(counters()).toEqual(before);
    const events = await startEvents(ns, pod.metadata.uid);
    const pulled = events.filter((e) => e.reason === 'Pulled').map((e) => e.message);
    expect(pulled).toEqual([`Container image "${WARM}" already present on machine`]);
    expect(events.some((e) => e.reason === 'Pulling')).toBe(false);
    process.stdout.write(`pre-pulled pod Ready ${readyMs} ms after creation (a pull takes ${PULL_MS} ms on this node)\n`);
  });

  it('(control) a pod of an image nobody pre-pulled makes the kubelet pull, and the counters see it', async () => {
    const before = counters();
    const t0 = Date.now();
    const pod = await createPod(ns, 'cold', podSpec(COLD));
    await waitPodReady(ns, 'cold');
    const readyMs = Date.now() - t0;

    expect(counters()).toEqual({ pullCount: before.pullCount + 1, pullRequests: before.pullRequests + 1 });
    const events = await startEvents(ns, pod.metadata.uid);
    expect(events.filter((e) => e.reason === 'Pulling').map((e) => e.message)).toEqual([`Pulling image "${COLD}"`]);
    const pulled = events.find((e) => e.reason === 'Pulled')?.message ?? '';
    expect(pulled).toMatch(new RegExp(`^Successfully pulled image "${COLD.replace(/[./]/g, '\\$&')}" in [0-9.]+m?s \\(`));
    expect(readyMs).toBeGreaterThanOrEqual(PULL_MS);
    // The daemon pulled nothing for it: the image is not in the node's ImageList.
    expect(await daemonPulls(daemon.httpPort)).toBe(1);
    process.stdout.write(`cold pod Ready ${readyMs} ms after creation; kubelet event: ${pulled}\n`);
  });
});
