/**
 * Pre-warm on the real node: the ebb daemon pulls an ImageList entry into the node's containerd through CRI,
 * then a pod of that image starts with the kubelet reporting it "already present on machine" and the
 * registry serving no manifest for that start; an image removed through CRI is pulled again by the daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.ts';
import { waitFor } from '../../src/common/wait.ts';
import { CriClient, unixEndpoint } from '../../src/cri/client.ts';
import { core } from '../../src/kube/paths.ts';
import { startNodeDaemons, type NodeDaemons } from '../../harness/sandbox/daemons.ts';
import { manifestRequests } from '../../harness/sandbox/real-node/registry.ts';
import { createList, createPod, deleteList, startEvents, waitImageStatus, waitPodReady } from '../integration/imagelist/helpers.ts';
import { freshNamespace, sandbox } from '../integration/support.ts';
import { httpGet, onRealNode, pushFresh, realNode, registryRequests } from './support.ts';

let daemons: NodeDaemons | undefined;
let cri: CriClient | undefined;

beforeAll(async () => {
  const node = realNode();
  // A short re-check period: the daemon notices an image that went missing within a second.
  daemons = await startNodeDaemons({
    kubeconfig: sandbox().kubeconfig,
    nodes: [{ name: node.name, criSocket: node.criSocket }],
    log: createLogger('rn-daemon', 'warn'),
    options: { recheckPeriodMs: 1_000 },
  });
  cri = CriClient.connect(unixEndpoint(node.criSocket));
});

afterAll(async () => {
  await deleteList(realNode().name);
  await daemons?.stop();
  cri?.close();
});

const manifests = async (repo: string): Promise<number> => manifestRequests(await registryRequests(), repo).length;

describe('pre-warm on a real node', () => {
  it('a pre-pulled image starts with no pull: "already present on machine", no manifest fetched', async () => {
    const node = realNode();
    const { repo, ref } = await pushFresh();
    await createList(node.name, [{ image: ref }]);
    const status = await waitImageStatus(node.name, ref, (s) => s.phase === 'Pulled', 'Pulled', 60_000);
    expect(status.imageRef).toMatch(/^sha256:/);
    const afterPrewarm = await manifests(repo);
    expect(afterPrewarm).toBeGreaterThan(0);

    const ns = await freshNamespace('rn-warm');
    const pod = await createPod(ns, 'warm', { ...onRealNode, containers: [{ name: 'main', image: ref }], terminationGracePeriodSeconds: 1 });
    const ready = await waitPodReady(ns, 'warm');
    const events = await startEvents(ns, pod.metadata.uid);
    expect(events.find((e) => e.reason === 'Pulled')?.message).toContain('already present on machine');
    expect(events.some((e) => e.reason === 'Pulling')).toBe(false);
    expect(await manifests(repo)).toBe(afterPrewarm);
    expect(await httpGet(String(ready.status?.['podIP'] ?? ''), 8080)).toBe('v2');
    await sandbox().rest.delete(core('pods', ns, 'warm'));
  });

  it('an alwaysPull entry whose image was removed through CRI is pulled again', async () => {
    const node = realNode();
    const { repo, ref } = await pushFresh();
    await deleteList(node.name);
    await createList(node.name, [{ image: ref, alwaysPull: true, repullIntervalSeconds: 3600 }]);
    await waitImageStatus(node.name, ref, (s) => s.phase === 'Pulled', 'Pulled', 60_000);
    const first = await manifests(repo);
    const signal = AbortSignal.timeout(60_000);
    expect(await cri?.imageStatus(ref, { signal })).toBeDefined();

    await cri?.removeImage(ref, { signal });
    expect(await cri?.imageStatus(ref, { signal })).toBeUndefined();
    await waitFor(async () => ((await cri?.imageStatus(ref, { signal })) ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `${ref} back on ${node.name}`,
    });
    expect(await manifests(repo)).toBeGreaterThan(first);
  });
});
