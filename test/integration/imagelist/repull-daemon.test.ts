/**
 * The periodic re-pull end to end: a node daemon, the always-on watcher process, and worker processes that a
 * KEDA stand-in starts only while the watcher's scaler reports due work. An `alwaysPull` entry with the
 * shortest interval the CRD allows (60 s) is pulled once, then again at each interval: the watcher's re-pull
 * timer fires at zero workers, KEDA starts a worker, the worker requests the pull, the daemon pulls, and the
 * worker goes away again. Halfway, the tag moves in the registry, and the next re-pull brings the new image.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_REPULL_INTERVAL_SECONDS } from '../../../src/api/image-list.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { createLogger } from '../../../src/common/log.ts';
import { startNodeDaemons, type NodeDaemon, type NodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { sandbox } from '../support.ts';
import { ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from '../watcher/helpers.ts';
import { startDedicatedNode, type DedicatedNode } from './dedicated-node.ts';
import { createList, daemonPulls, deleteList, readList, waitImageStatus } from './helpers.ts';
import { busyMs, longestIdle, startKeda, type Keda } from './keda.ts';

const INTERVAL_MS = MIN_REPULL_INTERVAL_SECONDS * 1000;
const tag = randomBytes(3).toString('hex');
const IMAGE = `registry.example.com/repull-${tag}/base:stable`;
/** What `:stable` points at once the tag moves. */
const NEXT = `registry.example.com/repull-${tag}/base:stable-2`;
/** Slack on top of the interval: timestamps in whole seconds, worker start-up, the daemon's status flush. */
const LATE_MS = 15_000;

describe('periodic re-pull with the node daemon and workers scaled from zero', () => {
  const procs: EbbProcess[] = [];
  let node: DedicatedNode;
  let daemons: NodeDaemons;
  let daemon: NodeDaemon;
  let keda: Keda;
  /** When the node's store received each PullImage (sampled every 100 ms; the daemon is the only client). */
  const pullTimes: number[] = [];
  let sampler: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    const { kubeconfig, redisUrl } = sandbox();
    node = await startDedicatedNode({ prefix: 'it-repull', index: 41, timings: { pullMs: 300 } });
    daemons = await startNodeDaemons({ kubeconfig, nodes: [node.node], log: createLogger('daemon', 'warn'), options: { statusFlushMs: 200 } });
    daemon = daemons.daemons.get(node.name)!;
    let seen = 0;
    sampler = setInterval(() => {
      for (; seen < node.node.store.pullRequests; seen++) pullTimes.push(Date.now());
    }, 100);

    const env = ebbEnv({ kubeconfig, redisUrl, prefix: uniquePrefix('repull-d'), namespaces: ['default'] }, { EBB_RESYNC_PERIOD: '0', EBB_LOG_LEVEL: 'debug' });
    const watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    const started = await watcher.waitForLog((l) => l.msg === 'watcher started', 30_000, 'watcher started');
    keda = startKeda({
      scalerPort: started['scalerPort'] as number,
      startWorker: (name) => {
        const p = spawnEbb('worker', env, name);
        procs.push(p);
        return p;
      },
      pollMs: 250,
      cooldownMs: 2_000,
    });
  });

  afterAll(async () => {
    clearInterval(sampler);
    await keda?.stop();
    await Promise.all(procs.map((p) => p.stop()));
    await daemons?.stop();
    await deleteList(node?.name ?? '');
    await node?.stop();
  });

  const pulls = (n: number, timeoutMs: number): Promise<number> =>
    waitFor(() => (pullTimes.length >= n ? pullTimes[n - 1] : undefined), { timeoutMs, intervalMs: 200, what: `pull #${n} on the node` });
  const requestsBy = (spanIndex: number): number => keda.spans[spanIndex]!.proc.logs.filter((l) => l.msg === 'periodic re-pull requested').length;

  it('pulls again at each interval; between pulls no worker runs until the timer wakes one', { timeout: 3 * INTERVAL_MS + 60_000 }, async () => {
    printLogsOnFailure(procs);
    await createList(node.name, [{ image: IMAGE, alwaysPull: true, repullIntervalSeconds: MIN_REPULL_INTERVAL_SECONDS }]);
    const first = await pulls(1, 30_000);
    const firstStatus = await waitImageStatus(node.name, IMAGE, (s) => s.phase === 'Pulled', 'first pull');

    const second = await pulls(2, INTERVAL_MS + LATE_MS);
    await waitImageStatus(node.name, IMAGE, (s) => s.observedPullRequestedAt !== undefined, 'first request answered');
    // The same content: containerd resolves the tag and transfers nothing.
    expect(node.node.store.pullCount).toBe(1);
    node.registry.retag(IMAGE, NEXT);

    const third = await pulls(3, INTERVAL_MS + LATE_MS);
    const moved = node.registry.resolve(NEXT).configDigest;
    const finalStatus = await waitImageStatus(node.name, IMAGE, (s) => s.imageRef === moved, 'the moved tag pulled');

    const gaps = [second - first, third - second];
    process.stdout.write(
      `pulls at +0, +${second - first} ms, +${third - first} ms; worker spans (ms from first pull): ${JSON.stringify(keda.spans.map((s) => [s.startedAt - first, (s.stoppedAt ?? Date.now()) - first]))}\n`,
    );
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(INTERVAL_MS - 2_000);
      expect(gap).toBeLessThan(INTERVAL_MS + LATE_MS);
    }
    // Three PullImage calls, two transfers (the first pull, and the tag that moved); the status follows.
    expect({ requests: node.node.store.pullRequests, transfers: node.node.store.pullCount }).toEqual({ requests: 3, transfers: 2 });
    expect(await daemonPulls(daemon.httpPort)).toBe(3);
    expect(finalStatus.imageRef).not.toBe(firstStatus.imageRef);
    expect(Date.parse(finalStatus.observedPullRequestedAt!)).toBeGreaterThan(first + INTERVAL_MS - 1_000);

    // Between two pulls the worker count went to zero for most of the interval...
    for (const [from, to] of [
      [first, second],
      [second, third],
    ] as const)
      expect(longestIdle(keda.spans, from, to)).toBeGreaterThan(to - from - 15_000);
    expect(busyMs(keda.spans, first, third)).toBeLessThan((third - first) / 5);
    // ...and each re-pull was requested by a worker KEDA started from zero after that quiet stretch.
    const requesters = keda.spans.flatMap((s, i) => (requestsBy(i) > 0 ? [s] : []));
    expect(requesters.map((s) => requestsBy(keda.spans.indexOf(s)))).toEqual([1, 1]);
    expect(requesters[0]!.startedAt).toBeGreaterThan(first + INTERVAL_MS - 15_000);
    expect(requesters[1]!.startedAt).toBeGreaterThan(second + INTERVAL_MS - 15_000);
    const managers = ((await readList(node.name))?.metadata as { managedFields?: { manager?: string }[] }).managedFields?.map((m) => m.manager);
    expect(managers).toContain('ebb-repull');
  });
});
