/**
 * containerd killed (SIGKILL) in the middle of a pre-warm pull on the real node: the sandbox starts it again
 * as a service manager would, the daemon's pull fails and is retried, and once the registry answers the image
 * is pulled and reported — the daemon recovers by itself, with nothing left Pulling.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/common/log.ts';
import { waitFor } from '../../src/common/wait.ts';
import { CriClient, unixEndpoint } from '../../src/cri/client.ts';
import { core } from '../../src/kube/paths.ts';
import { startNodeDaemons, type NodeDaemons } from '../../harness/sandbox/daemons.ts';
import { isNodeReady } from '../../harness/sandbox/real-node/node-ready.ts';
import { startRegistryGate, type RegistryGate } from '../integration/daemon/registry-gate.ts';
import { createList, deleteList, readList, waitImageStatus } from '../integration/imagelist/helpers.ts';
import { sandbox } from '../integration/support.ts';
import { pushFresh, realNode } from './support.ts';

let daemons: NodeDaemons | undefined;
let cri: CriClient | undefined;
let gate: RegistryGate | undefined;

beforeAll(async () => {
  const node = realNode();
  daemons = await startNodeDaemons({
    kubeconfig: sandbox().kubeconfig,
    nodes: [{ name: node.name, criSocket: node.criSocket }],
    // Pulls fail while containerd is down; the daemon's warnings about it are expected.
    log: createLogger('rn-daemon', 'error'),
    options: { backoffBaseMs: 500, backoffMaxMs: 2_000, statusFlushMs: 200 },
  });
  cri = CriClient.connect(unixEndpoint(node.criSocket));
  gate = await startRegistryGate(`http://${inject('registry')}`);
});

afterAll(async () => {
  await deleteList(realNode().name);
  await daemons?.stop();
  await gate?.dispose();
  cri?.close();
});

const pidOf = async (file: string): Promise<number> => Number((await readFile(file, 'utf8')).trim());

describe('a pull fault on a real node', () => {
  it('containerd killed mid-pull: restarted, the daemon pulls again and reports Pulled', async () => {
    const node = realNode();
    if (!gate || !cri) throw new Error('set-up failed');
    const { repo } = await pushFresh();
    const ref = `${gate.host}/${repo}:v2`;
    gate.close();
    await createList(node.name, [{ image: ref }]);
    await waitFor(() => (gate?.requests().some((r) => r.state === 'held' && r.path.includes('/blobs/')) ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'a blob download held at the gate',
    });
    const killed = await pidOf(node.containerdPidFile);
    process.kill(killed, 'SIGKILL');
    await waitFor(async () => ((await pidOf(node.containerdPidFile)) !== killed ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'containerd started again',
    });
    gate.open();

    const status = await waitImageStatus(node.name, ref, (s) => s.phase === 'Pulled', 'Pulled', 90_000);
    expect(status.imageRef).toMatch(/^sha256:/);
    expect(await cri.imageStatus(ref, { signal: AbortSignal.timeout(10_000) })).toBeDefined();
    expect((await readList(node.name))?.status?.images?.every((i) => i.phase === 'Pulled')).toBe(true);
    const port = daemons?.daemons.get(node.name)?.httpPort ?? 0;
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    // The kubelet lost its runtime for a moment: the node is Ready again for the tests that follow.
    await waitFor(async () => (isNodeReady(await sandbox().rest.get(core('nodes', undefined, node.name))) ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `${node.name} Ready again`,
    });
  });
});
