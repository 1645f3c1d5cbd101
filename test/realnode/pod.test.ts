/**
 * The real node itself: a pod placed on it by the scheduler runs real containers from the sandbox registry,
 * gets an address from the node's bridge network and answers HTTP there; deleting it stops them.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/common/wait.ts';
import { core } from '../../src/kube/paths.ts';
import { KubeError } from '../../src/kube/errors.ts';
import { freshNamespace, sandbox } from '../integration/support.ts';
import { appImage, containerStatus, httpGet, isReady, mainContainer, onRealNode, podUntil, realNode, sidecar } from './support.ts';

describe('a real node', () => {
  it('runs a pod that answers HTTP on its pod IP, and removes it on delete', async () => {
    const { rest } = sandbox();
    const node = realNode();
    const ns = await freshNamespace('rn-pod');
    await rest.create(core('pods', ns), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: { ...onRealNode, containers: [mainContainer('v1'), sidecar()], terminationGracePeriodSeconds: 1 },
    });
    const pod = await podUntil(ns, 'web', isReady, 'Ready');
    expect(pod.spec?.['nodeName']).toBe(node.name);
    const ip = String(pod.status?.['podIP'] ?? '');
    expect(ip.startsWith(node.podSubnet.replace(/0\/24$/, ''))).toBe(true);
    expect(await httpGet(ip, 8080)).toBe('v1');
    expect(await httpGet(ip, 8080, '/healthz')).toBe('ok');
    expect(await httpGet(ip, 8081)).toBe('v3');
    const main = containerStatus(pod, 'main');
    expect(main).toMatchObject({ ready: true, restartCount: 0, image: appImage('v1') });
    expect(main?.imageID).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(main?.containerID).toMatch(/^containerd:\/\//);

    await rest.delete(core('pods', ns, 'web'));
    await waitFor(
      async () => {
        try {
          await rest.get(core('pods', ns, 'web'));
          return undefined;
        } catch (err) {
          if (err instanceof KubeError && err.status === 404) return true;
          throw err;
        }
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'pod web gone' },
    );
    await expect(httpGet(ip, 8080)).rejects.toThrow();
  });
});
