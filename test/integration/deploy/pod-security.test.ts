/**
 * Pod Security of deploy/ on the sandbox apiserver: a pod made from each workload's template, as its controller
 * would make it, is created with a server dry run, so the apiserver's PodSecurity admission judges it against
 * the labels deploy/ gives its namespace. Every workload passes in ebb-system, which enforces `restricted`,
 * except the node daemon (a hostPath volume for the runtime socket): `restricted` refuses it, and its own
 * namespace admits it. The namespaces are made from deploy/'s Namespace objects, labels included, under
 * names of this test's own, so that it never meets another file's install.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { rejection, sandbox } from '../support.ts';
import { DAEMON_NAMESPACE, kubectlFor, NAMESPACE, podFromWorkload, render, type Manifest } from './install.ts';

describe("deploy/'s workloads under Pod Security admission", () => {
  const { rest, kubeconfig } = sandbox();
  const kubectl = kubectlFor(kubeconfig, AbortSignal.timeout(300_000));
  const suffix = randomBytes(3).toString('hex');
  /** deploy/'s namespace → this test's copy of it. */
  const copyOf = (ns: string): string => `${ns}-ps-${suffix}`;
  let objects: Manifest[] = [];

  beforeAll(async () => {
    objects = await render(kubectl, 'deploy');
    for (const ns of objects.filter((o) => o.kind === 'Namespace')) {
      const name = copyOf(ns.metadata.name);
      await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: ns.metadata.labels } });
      // Admission looks up a pod's service account: every account of deploy/ (and `default`) in both copies.
      for (const sa of ['default', ...objects.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata.name)]) {
        await rest.create(core('serviceaccounts', name), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa } }).catch((err: unknown) => {
          if (!isKubeError(err, 'AlreadyExists')) throw err;
        });
      }
    }
  });

  afterAll(async () => {
    for (const ns of [NAMESPACE, DAEMON_NAMESPACE]) await rest.delete(core('namespaces', undefined, copyOf(ns))).catch(() => undefined);
  });

  const dryRun = (pod: Manifest, namespace: string): Promise<unknown> =>
    rest.create(core('pods', namespace), { ...pod, metadata: { ...pod.metadata, namespace } }, { dryRun: 'All' });

  it('admits every workload in ebb-system, which enforces restricted', async () => {
    const namespace = objects.find((o) => o.kind === 'Namespace' && o.metadata.name === NAMESPACE);
    expect(namespace?.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
    const workloads = objects.filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(o.kind));
    const inSystem = workloads.filter((w) => w.metadata.namespace === NAMESPACE);
    expect(inSystem.map((w) => `${w.kind}/${w.metadata.name}`).sort()).toEqual(['Deployment/ebb-watcher', 'Deployment/ebb-worker', 'StatefulSet/ebb-redis']);
    expect(workloads.filter((w) => w.metadata.namespace !== NAMESPACE).map((w) => `${w.metadata.namespace}/${w.metadata.name}`)).toEqual([
      `${DAEMON_NAMESPACE}/ebb-daemon`,
    ]);
    for (const w of inSystem) await expect(dryRun(podFromWorkload(w), copyOf(NAMESPACE)), w.metadata.name).resolves.toMatchObject({ kind: 'Pod' });
  });

  it('refuses the daemon under restricted; its own namespace admits it', async () => {
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet');
    expect(daemonSet?.metadata.namespace).toBe(DAEMON_NAMESPACE);
    const pod = podFromWorkload(daemonSet!);
    const refused = await rejection(dryRun(pod, copyOf(NAMESPACE)));
    expect(refused.code).toBe('Forbidden');
    // The runtime socket's hostPath volume is its only violation.
    expect(refused.message).toMatch(
      /violates PodSecurity "restricted:latest": restricted volume types \(volume "cri" uses restricted volume type "hostPath"\)$/,
    );
    await expect(dryRun(pod, copyOf(DAEMON_NAMESPACE))).resolves.toMatchObject({ kind: 'Pod', spec: { priorityClassName: 'system-node-critical' } });
  });
});
