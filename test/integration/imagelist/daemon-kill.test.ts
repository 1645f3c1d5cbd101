/**
 * A node daemon SIGKILLed in the middle of a slow pull on a simulated node: no final status write happens, the
 * ImageList is left saying Pulling, and the pull goes on in the runtime (as containerd's would). A new `ebb
 * daemon` process for the node takes over from that status and ends with a correct one, without transferring
 * the image twice.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { unixEndpoint } from '../../../src/cri/client.ts';
import { sandbox } from '../support.ts';
import { printLogsOnFailure, spawnEbb, type EbbProcess } from '../watcher/helpers.ts';
import { startDedicatedNode, type DedicatedNode } from './dedicated-node.ts';
import { createList, daemonPulls, deleteList, readList, waitImageStatus } from './helpers.ts';

const tag = randomBytes(3).toString('hex');

describe('a node daemon SIGKILLed mid-pull', () => {
  const procs: EbbProcess[] = [];
  let node: DedicatedNode;
  let env: Record<string, string>;
  const counters = () => ({ requests: node.node.store.pullRequests, transfers: node.node.store.pullCount });
  const startDaemon = async (name: string): Promise<{ proc: EbbProcess; port: number }> => {
    const proc = spawnEbb('daemon', env, name);
    procs.push(proc);
    return { proc, port: await proc.httpPort() };
  };
  const statusOf = async (image: string) => (await readList(node.name))?.status?.images?.find((s) => s.image === image);
  /** Starts a daemon, lets it start pulling `image` (status Pulling written), and SIGKILLs it. */
  const killMidPull = async (image: string): Promise<void> => {
    const { proc } = await startDaemon(`daemon-${procs.length}`);
    await createList(node.name, [{ image }]);
    await waitImageStatus(node.name, image, (s) => s.phase === 'Pulling', 'Pulling');
    expect(node.node.store.status(image)).toBeUndefined();
    process.kill(proc.pid, 'SIGKILL');
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Nobody wrote a final status.
    expect((await statusOf(image))?.phase).toBe('Pulling');
  };

  beforeAll(async () => {
    node = await startDedicatedNode({ prefix: 'it-kill', index: 42 });
    env = {
      KUBECONFIG: sandbox().kubeconfig,
      EBB_NODE_NAME: node.name,
      EBB_CRI_ENDPOINT: unixEndpoint(node.node.criSocket),
      EBB_STATUS_FLUSH: '200ms',
      EBB_LOG_LEVEL: 'info',
    };
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await deleteList(node?.name ?? '');
    await node?.stop();
  });

  it('comes back while the runtime still pulls, joins that pull, and reports Pulled after two attempts', async () => {
    printLogsOnFailure(procs);
    const image = `registry.example.com/kill/slow:${tag}`;
    node.setTimings({ pullMs: 10_000 });
    const before = counters();
    await killMidPull(image);

    const { proc, port } = await startDaemon('daemon-restarted');
    const status = await waitImageStatus(node.name, image, (s) => s.phase === 'Pulled', 'Pulled after the restart');
    const stored = node.node.store.status(image);
    expect(status).toMatchObject({ imageRef: stored?.id, attempts: 2, lastPullTime: expect.any(String) as unknown });
    expect(status.message).toBeUndefined();
    const list = await readList(node.name);
    expect(list?.status?.observedGeneration).toBe(list?.metadata.generation);
    // Two PullImage calls (one per daemon), one transfer: the second call joined the pull still running.
    expect(counters()).toEqual({ requests: before.requests + 2, transfers: before.transfers + 1 });
    expect(await daemonPulls(port)).toBe(1);

    await proc.stop();
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    await deleteList(node.name);
    await waitFor(async () => ((await readList(node.name)) === undefined ? true : undefined), { timeoutMs: 10_000, what: 'ImageList gone' });
  });

  it('comes back after the pull finished in the runtime, and reports Pulled without pulling again', async () => {
    const image = `registry.example.com/kill/done:${tag}`;
    node.setTimings({ pullMs: 2_000 });
    const before = counters();
    await killMidPull(image);
    await waitFor(() => node.node.store.status(image), { timeoutMs: 10_000, what: 'the pull finished in the runtime' });

    const { port } = await startDaemon('daemon-after-pull');
    const status = await waitImageStatus(node.name, image, (s) => s.phase === 'Pulled', 'Pulled after the restart');
    expect(status.imageRef).toBe(node.node.store.status(image)?.id);
    expect(status.message).toBeUndefined();
    expect(counters()).toEqual({ requests: before.requests + 1, transfers: before.transfers + 1 });
    expect(await daemonPulls(port)).toBe(0);
  });
});
