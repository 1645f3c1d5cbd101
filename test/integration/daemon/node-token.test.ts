/**
 * The daemon's RBAC and admission policy from deploy/, installed into the sandbox apiserver and exercised
 * with real service-account tokens: a token bound to a pod on node A carries A's name (the
 * ServiceAccountTokenPodNodeInfo claims), may write the status of A's ImageList and not B's, and reads
 * Secrets only with the opt-in component deploy/components/daemon-pull-secrets, and then only the worker's
 * copies in its own namespace.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { parseImageReference } from '../../../src/api/image-ref.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { copySecretReader, pullAuthFrom } from '../../../src/daemon/secrets.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { KubeRest, loadKubeConfig, PatchType } from '../../../src/kube/rest.ts';
import { copyPullSecrets, createPullSecret, freshNamespace, rejection, sandbox } from '../support.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const KUBECTL = join(ROOT, 'bin', 'kubectl');
const run = promisify(execFile);

// The daemon's own namespace (deploy/namespace.yaml): its pod needs a hostPath volume, which ebb-system refuses.
const NAMESPACE = 'ebb-node';
const DAEMON_SA = 'ebb-daemon';
const POLICY_MESSAGE = 'the ebb daemon may only write the ImageList of its own node';
const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';
const WAIT = { timeoutMs: 30_000, intervalMs: 200 };

type Manifest = { kind: string; metadata: { name: string; namespace?: string } } & Record<string, unknown>;

/** The claims of a JWT (no signature check: the apiserver made it, and the test only reads it). */
function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('daemon RBAC and the own-node admission policy, with real tokens', () => {
  const { rest, kubeconfig, nodeNames } = sandbox();
  const [nodeA = '', nodeB = ''] = nodeNames;
  const suffix = randomBytes(3).toString('hex');
  const pod = `ebb-daemon-${suffix}`;
  const signal = AbortSignal.timeout(300_000);
  let dir: string;
  let installed: string;
  let component: string;
  let boundToken: string;
  let bound: KubeRest;
  let unbound: KubeRest;

  const kubectl = async (...args: string[]): Promise<string> =>
    (await run(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 * 1024 * 1024, signal })).stdout;
  /** `kubectl kustomize` of a directory, as objects. */
  const render = async (path: string): Promise<Manifest[]> => parseAllDocuments(await kubectl('kustomize', path)).map((d) => d.toJS() as Manifest);
  const writeManifests = async (name: string, objects: Manifest[]): Promise<string> => {
    const file = join(dir, name);
    await writeFile(file, objects.map((o) => stringify(o)).join('---\n'));
    return file;
  };
  /** A client that authenticates with `token`, to the sandbox apiserver. */
  const clientWith = async (token: string, name: string): Promise<KubeRest> => {
    const admin = parse(await readFile(kubeconfig, 'utf8')) as { clusters: unknown[]; contexts: { name: string; context: { cluster: string } }[] };
    const file = join(dir, `${name}.kubeconfig`);
    const cluster = admin.contexts[0]?.context.cluster;
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: admin.clusters,
      users: [{ name, user: { token } }],
      contexts: [{ name, context: { cluster, user: name } }],
      'current-context': name,
    };
    await writeFile(file, stringify(doc), { mode: 0o600 });
    return new KubeRest(loadKubeConfig(file));
  };
  const statusPatch = (image: string): unknown => ({ status: { images: [{ image, phase: 'Pulled' }] } });
  const image = 'registry.example.com/team/app:v1';
  const removeLists = async (): Promise<void> => {
    for (const node of [nodeA, nodeB]) {
      await rest.delete(imageListRef(node)).catch((err: unknown) => {
        if (!isKubeError(err, 'NotFound')) throw err;
      });
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-rbac-'));
    // The daemon's objects exactly as `kubectl apply -k deploy/` installs them (namespace set, labels added),
    // without the workloads: the sandbox has no real kubelet to run them.
    const all = await render(join(ROOT, 'deploy'));
    const daemonRbac = all.filter(
      (o) =>
        (o.kind === 'Namespace' && o.metadata.name === NAMESPACE) ||
        (['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(o.kind) &&
          o.metadata.name.startsWith('ebb-daemon')),
    );
    expect(daemonRbac.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/ebb-daemon',
      'ClusterRoleBinding/ebb-daemon',
      `Namespace/${NAMESPACE}`,
      'ServiceAccount/ebb-daemon',
      'ValidatingAdmissionPolicy/ebb-daemon-own-node',
      'ValidatingAdmissionPolicyBinding/ebb-daemon-own-node',
    ]);
    installed = await writeManifests('daemon-rbac.yaml', daemonRbac);
    await kubectl('apply', '-f', installed);

    // The opt-in component, rendered the way an overlay enables it; applied by a test below.
    const overlay = join(dir, 'overlay');
    const deployFromOverlay = relative(overlay, join(ROOT, 'deploy'));
    await mkdir(overlay);
    await writeFile(
      join(overlay, 'kustomization.yaml'),
      stringify({ resources: [deployFromOverlay], components: [`${deployFromOverlay}/components/daemon-pull-secrets`] }),
    );
    const withComponent = await render(overlay);
    const added = withComponent.filter((o) => !all.some((b) => b.kind === o.kind && b.metadata.name === o.metadata.name));
    expect(added.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/ebb-worker-read-pull-secrets',
      'ClusterRoleBinding/ebb-worker-read-pull-secrets',
      'Role/ebb-daemon-pull-secrets',
      'Role/ebb-worker-pull-secrets',
      'RoleBinding/ebb-daemon-pull-secrets',
      'RoleBinding/ebb-worker-pull-secrets',
    ]);
    // The daemon's grant is a Role in its own namespace: no Secret elsewhere.
    expect(added.filter((o) => o.metadata.name.startsWith('ebb-daemon')).map((o) => o.metadata.namespace)).toEqual([NAMESPACE, NAMESPACE]);
    component = await writeManifests('daemon-pull-secrets.yaml', added);

    // A daemon pod on node A (the simulated kubelet runs it), and a token bound to it.
    await rest.create(core('pods', NAMESPACE), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod },
      spec: { serviceAccountName: DAEMON_SA, nodeName: nodeA, containers: [{ name: 'daemon', image: 'registry.example.com/ebb:test' }] },
    });
    boundToken = (
      await kubectl('create', 'token', DAEMON_SA, '-n', NAMESPACE, '--bound-object-kind', 'Pod', '--bound-object-name', pod, '--duration', '1h')
    ).trim();
    bound = await clientWith(boundToken, 'bound');
    unbound = await clientWith((await kubectl('create', 'token', DAEMON_SA, '-n', NAMESPACE, '--duration', '1h')).trim(), 'unbound');

    await removeLists();
    for (const node of [nodeA, nodeB]) {
      await rest.create(imageListRef(), { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: node }, spec: { images: [{ image }] } });
    }
    // The policy is enforced once the apiserver has loaded it: wait with dry-run writes, which admission sees.
    await waitFor(
      async () => {
        const err = await rejection(bound.patch(imageListRef(nodeB, 'status'), statusPatch(image), PatchType.merge, { dryRun: 'All' })).catch(() => undefined);
        return err?.message.includes(POLICY_MESSAGE) ? true : undefined;
      },
      { ...WAIT, signal, what: 'the admission policy in force' },
    );
  });

  afterAll(async () => {
    await removeLists().catch(() => undefined);
    if (component) await kubectl('delete', '--ignore-not-found', '-f', component).catch(() => undefined);
    await rest.delete(core('pods', NAMESPACE, pod), { gracePeriodSeconds: 0 }).catch(() => undefined);
    if (installed) await kubectl('delete', '--ignore-not-found', '--wait=false', '-f', installed).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a token bound to a pod on node A names node A, as a claim and as the user's extra", async () => {
    const claims = jwtClaims(boundToken);
    expect(claims['kubernetes.io']).toMatchObject({
      namespace: NAMESPACE,
      pod: { name: pod },
      serviceaccount: { name: DAEMON_SA },
      node: { name: nodeA, uid: expect.any(String) as unknown },
    });
    const review = await bound.create<{ status: { userInfo: { username: string; extra?: Record<string, string[]> } } }>(
      { group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews' },
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    );
    expect(review.status.userInfo.username).toBe(`system:serviceaccount:${NAMESPACE}:${DAEMON_SA}`);
    expect(review.status.userInfo.extra?.[NODE_NAME_EXTRA]).toEqual([nodeA]);
  });

  it("may write the status of node A's ImageList, not node B's: the policy refuses with its message", async () => {
    const written = await bound.patch<ImageList>(imageListRef(nodeA, 'status'), statusPatch(image), PatchType.merge);
    expect(written.status?.images).toEqual([{ image, phase: 'Pulled' }]);

    const err = await rejection(bound.patch(imageListRef(nodeB, 'status'), statusPatch(image), PatchType.merge));
    expect(err.code).toBe('Forbidden');
    expect(err.message).toContain(`ValidatingAdmissionPolicy 'ebb-daemon-own-node' with binding 'ebb-daemon-own-node' denied request: ${POLICY_MESSAGE}`);
    expect((await rest.get<ImageList>(imageListRef(nodeB))).status).toBeUndefined();
  });

  it("reads every ImageList, but may not change a spec, not even its own node's (RBAC)", async () => {
    expect((await bound.get<ImageList>(imageListRef(nodeB))).metadata.name).toBe(nodeB);
    const err = await rejection(bound.patch(imageListRef(nodeA), { spec: { images: [] } }, PatchType.merge));
    expect(err.code).toBe('Forbidden');
    expect(err.message).toContain(`cannot patch resource "imagelists" in API group "apps.ebb.dev"`);
  });

  it('a token of the daemon account bound to no pod names no node, and may write no status', async () => {
    const err = await rejection(unbound.patch(imageListRef(nodeA, 'status'), statusPatch(image), PatchType.merge));
    expect(err.code).toBe('Forbidden');
    expect(err.message).toContain(POLICY_MESSAGE);
  });

  it("reads the worker's copy of a pull Secret in its own namespace once deploy/components/daemon-pull-secrets is installed; never the Secret itself", async () => {
    const ns = await freshNamespace('pullsec');
    await createPullSecret(ns, 'regcred', { 'registry.example.com': { username: 'robot', password: 'not-for-the-test-log' } });
    const source = { namespace: ns, name: 'regcred' };
    await rest.patch(imageListRef(nodeA), { spec: { images: [{ image, pullSecret: source }] } }, PatchType.merge);
    // The worker's copy for node A, made by its own code (as admin here).
    await copyPullSecrets(nodeA, NAMESPACE);
    const parsed = parseImageReference(image);
    if (!parsed.ok) throw new Error(parsed.reason);
    // The daemon's own read of an entry's pull secret, with the daemon's token.
    const credentials = (): Promise<unknown> =>
      pullAuthFrom(copySecretReader(bound, NAMESPACE, nodeA), source, parsed.ref, AbortSignal.any([signal, AbortSignal.timeout(10_000)]));

    await expect(credentials()).rejects.toMatchObject({ name: 'PullSecretError', code: 'Forbidden', message: `pull secret ${ns}/regcred is unusable` });
    await kubectl('apply', '-f', component);

    await waitFor(async () => ((await credentials().catch(() => undefined)) !== undefined ? true : undefined), {
      ...WAIT,
      signal,
      what: 'the copy readable with the component',
    });
    expect(await credentials()).toEqual({ serverAddress: 'registry.example.com', username: 'robot', password: 'not-for-the-test-log' });
    // Node B's daemon would find no copy of its own for this Secret: copies are per ImageList.
    await expect(pullAuthFrom(copySecretReader(bound, NAMESPACE, nodeB), source, parsed.ref, signal)).rejects.toMatchObject({ code: 'NotFound' });
    // The Secret itself stays out of reach, and no Secret can be listed.
    const denied = await rejection(bound.get(core('secrets', ns, 'regcred')));
    expect(denied.message).toContain('cannot get resource "secrets"');
    const listed = await rejection(bound.list(core('secrets', NAMESPACE)));
    expect(listed.code).toBe('Forbidden');
    expect(listed.message).toContain('cannot list resource "secrets"');
  });
});
