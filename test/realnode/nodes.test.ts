/**
 * Several real nodes on one machine: a pod on each runs, `kubectl logs` and `kubectl exec` reach it through
 * the apiserver (the kubelet serves on the node IP with a certificate of the sandbox CA, and lets the
 * apiserver's client identity in), and a pod on one node reaches a pod on the other over HTTP.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { core } from '../../src/kube/paths.ts';
import { DEFAULT_BIN_DIR } from '../../harness/sandbox/paths.ts';
import { freshNamespace, sandbox } from '../integration/support.ts';
import { isReady, mainContainer, onRealNodeAt, podUntil, realNodes } from './support.ts';

const run = promisify(execFile);

/** The kubectl binary built with the control plane, against the sandbox. */
async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await run(join(DEFAULT_BIN_DIR, 'kubectl'), ['--kubeconfig', sandbox().kubeconfig, '--request-timeout=30s', ...args], {
    timeout: 60_000,
  });
  return stdout.trim();
}

describe('several real nodes', () => {
  it('run a pod each that kubectl logs and exec reach, and their pods reach each other', async () => {
    const nodes = realNodes();
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    const ns = await freshNamespace('rn-nodes');
    const { rest } = sandbox();
    for (const [i, node] of nodes.entries()) {
      await rest.create(core('pods', ns), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `web-${i}` },
        spec: { ...onRealNodeAt(i), dnsPolicy: 'Default', containers: [mainContainer('v1')], terminationGracePeriodSeconds: 1 },
      });
      expect(node.mountNamespace).toContain(node.name);
    }
    const pods = await Promise.all(nodes.map((_, i) => podUntil(ns, `web-${i}`, isReady, 'Ready')));
    const ips = pods.map((p) => String(p.status?.['podIP'] ?? ''));
    for (const [i, node] of nodes.entries()) {
      expect(pods[i]?.spec?.['nodeName']).toBe(node.name);
      expect(ips[i]?.startsWith(node.podSubnet.replace(/0\/24$/, ''))).toBe(true);
      expect(await kubectl(['-n', ns, 'logs', `web-${i}`, '-c', 'main'])).toContain('app v1 listening on :8080');
      // exec runs in the container on node i; from there, GET the pod of the next node.
      const other = ips[(i + 1) % nodes.length] ?? '';
      expect(await kubectl(['-n', ns, 'exec', `web-${i}`, '-c', 'main', '--', '/app', 'get', `http://${other}:8080/`])).toBe('v1');
    }
  });
});
