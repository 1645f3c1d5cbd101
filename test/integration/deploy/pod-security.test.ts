/**
 * Pod Security of deploy/ on the sandbox apiserver: a pod made from each workload's template, as its controller
 * would make it, is created with a server dry run, so the apiserver's PodSecurity admission judges it against
 * the labels deploy/ gives its namespace. Every workload passes in ebb-system, which enforces `restricted`,
 * except the node daemon (a hostPath volume for the runtime socket): `restricted` refuses it, and its own
 * namespace admits it. The namespaces are made from deploy/'s Namespace objects, labels included, under
 * names of this test's own, so that it never meets another file's install. Last, kubectl's rendering of deploy/
 * is compared with the reader the unit tests of deploy/ use.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { kustomize } from '../../unit/deploy/kustomize.ts';
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
    // The hostPath volumes of the runtime socket and of the runtime's root (statfs of the image filesystem) are its
    // only violation.
    expect(refused.message).toMatch(
      /violates PodSecurity "restricted:latest": restricted volume types \(volumes "cri", "image-fs" use restricted volume type "hostPath"\)$/,
    );
    await expect(dryRun(pod, copyOf(DAEMON_NAMESPACE))).resolves.toMatchObject({ kind: 'Pod', spec: { priorityClassName: 'system-node-critical' } });
  });

  it("renders deploy/ as the unit tests' reader does (kubectl also adds the part-of label and image tags)", async () => {
    const { images } = parse(await readFile(join(PROJECT_ROOT, 'deploy/kustomization.yaml'), 'utf8')) as {
      images: { name: string; newName: string; newTag: string }[];
    };
    const key = (o: { kind: string; metadata: { name: string; namespace?: string } }): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const byKey = (a: Parameters<typeof key>[0], b: Parameters<typeof key>[0]): number => key(a).localeCompare(key(b));
    const kubectlRendered = [...objects].sort(byKey);
    // The reader leaves `images:` and `labels:` to kubectl: apply them to its output the same way.
    const tagged = (o: unknown): unknown =>
      JSON.parse(images.reduce((text, i) => text.replaceAll(`"image":"${i.name}"`, `"image":"${i.newName}:${i.newTag}"`), JSON.stringify(o)));
    const read = kustomize('deploy')
      .sort(byKey)
      .map((o) => tagged({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, 'app.kubernetes.io/part-of': 'ebb' } } }));
    expect(kubectlRendered).toEqual(read);
  });
});
