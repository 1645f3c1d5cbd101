/**
 * deploy/'s admission policies on the sandbox apiserver, under identities of their own: the policies and the
 * worker's ClusterRole are applied as `kubectl kustomize` renders them, renamed with this test's suffix so that
 * they never meet another file's install (the policies match by request, not by name, so the copies judge the
 * same requests). The worker's account lives in a namespace of this test's own, which shows that the policies
 * bind to the account in any namespace; a render of deploy/ into another namespace leaves them unchanged.
 *
 * - ImageList pull secrets: a user who may write ImageLists and read tenant-a's Secrets names tenant-a's Secret
 *   but not tenant-b's; an entry another writer left in place does not block that user's update.
 * - App analysis headers: the same user may take a header's value from a Secret of tenant-a, not of tenant-b,
 *   and may still edit a tenant-b App whose header an admin pointed at tenant-b's Secret, but not send that
 *   header to another URL (or under another name or key).
 * - The worker (its service account, impersonated): no pod without an App controller reference, nothing in
 *   kube-system or its own namespace, no pod of another controller taken over or deleted; App-owned pods and
 *   revisions, adoption of orphans and release are admitted.
 * - The watcher (its service account, impersonated): on an App only what the rollouts page's actions write (pause,
 *   ebb's rollout annotations, the template's restart stamp); the image, replicas, labels, finalizers, another
 *   annotation or another rollout setting are refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { API_VERSION, APP_KIND, appRef as appsOf, IMAGE_LIST_KIND } from '../../../src/api/group.ts';
import type { Stored } from '../../../src/kube/types.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { kubectlFor, render, writeManifests, type Manifest } from './install.ts';

const POLICIES = ['ebb-worker-app-owned', 'ebb-imagelist-pull-secrets', 'ebb-daemon-own-node', 'ebb-app-analysis-secrets', 'ebb-watcher-app-actions'];
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

describe("deploy/'s admission policies", () => {
  const { rest, kubeconfig } = sandbox();
  const signal = AbortSignal.timeout(300_000);
  const kubectl = kubectlFor(kubeconfig, signal);
  const suffix = randomBytes(3).toString('hex');
  const renamed = (name: string): string => `${name}-${suffix}`;
  const user = `tenant-a-writer-${suffix}`;
  const list = `it-admission-${suffix}`;
  let dir = '';
  let own = '';
  let tenantA = '';
  let tenantB = '';
  let installed: Manifest[] = [];
  let counter = 0;

  /** kubectl as `who` (impersonated; a service account also gets its groups), the object written to a file first. */
  const as = async (who: string[], verb: string[], object?: unknown): Promise<string> => {
    const file = join(dir, `req-${counter++}.json`);
    if (object) await writeFile(file, JSON.stringify(object));
    return kubectl(...verb, ...(object ? ['-f', file] : []), ...who.flatMap((w, i) => (i === 0 ? ['--as', w] : ['--as-group', w])));
  };
  const account = (name: string): string[] => [
    `system:serviceaccount:${own}:${name}`,
    'system:serviceaccounts',
    `system:serviceaccounts:${own}`,
    'system:authenticated',
  ];
  const worker = (): string[] => account('ebb-worker');
  const refused = (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => {
        throw new Error('expected a refusal');
      },
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-admission-'));
    own = await freshNamespace('ebb-own');
    await kubectl('label', 'namespace', own, 'app.kubernetes.io/part-of=ebb');
    tenantA = await freshNamespace('tenant-a');
    tenantB = await freshNamespace('tenant-b');
    const objects = await render(kubectl, 'deploy');
    const pick = (kind: string, name: string): Manifest => {
      const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
      if (!o) throw new Error(`deploy/ renders no ${kind}/${name}`);
      return structuredClone(o);
    };
    const policies = POLICIES.flatMap((name) => {
      const policy = pick('ValidatingAdmissionPolicy', name);
      const binding = pick('ValidatingAdmissionPolicyBinding', name);
      policy.metadata.name = renamed(name);
      binding.metadata.name = renamed(name);
      (binding['spec'] as { policyName: string }).policyName = renamed(name);
      return [policy, binding];
    });
    const role = pick('ClusterRole', 'ebb-worker');
    role.metadata.name = renamed('ebb-worker');
    const watcherRole = pick('ClusterRole', 'ebb-watcher');
    watcherRole.metadata.name = renamed('ebb-watcher');
    const writerRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: renamed('imagelist-writer') },
      rules: [{ apiGroups: ['apps.ebb.dev'], resources: ['imagelists', 'apps'], verbs: ['get', 'create', 'patch', 'update'] }],
    };
    const readerRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: renamed('secret-reader') },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
    };
    const bind = (kind: string, name: string, subject: Record<string, string>, namespace?: string): Manifest => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
      metadata: { name: renamed(name), ...(namespace ? { namespace } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
      subjects: [subject],
    });
    installed = [
      ...policies,
      role,
      writerRole,
      bind('ClusterRole', role.metadata.name, { kind: 'ServiceAccount', name: 'ebb-worker', namespace: own }),
      watcherRole,
      bind('ClusterRole', watcherRole.metadata.name, { kind: 'ServiceAccount', name: 'ebb-watcher', namespace: own }),
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ebb-watcher', namespace: own } },
      bind('ClusterRole', writerRole.metadata.name, { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }),
      // tenant-a's Secrets are readable for the writer.
      bind('ClusterRole', readerRole.metadata.name, { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }, tenantA),
      readerRole,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ebb-worker', namespace: own } },
    ];
    const file = join(dir, 'installed.json');
    await writeManifests(file, installed);
    await kubectl('apply', '--server-side', '-f', file);
    for (const ns of [tenantA, tenantB])
      await rest.create(core('secrets', ns), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'registry' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64') },
      });
  });

  afterAll(async () => {
    if (installed.length > 0) {
      const file = join(dir, 'installed.json');
      await kubectl('delete', '--ignore-not-found', '--wait=false', '-f', file).catch(() => undefined);
    }
    await kubectl('delete', 'imagelist', list, '--ignore-not-found', '--wait=false').catch(() => undefined);
    for (const ns of [own, tenantA, tenantB]) if (ns) await rest.delete(core('namespaces', undefined, ns)).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const entryList = (images: { image: string; pullSecret?: { namespace: string; name: string } }[]): unknown => ({
    apiVersion: API_VERSION,
    kind: IMAGE_LIST_KIND,
    metadata: { name: list },
    spec: { images },
  });
  const writer = (): string[] => [user, 'system:authenticated'];

  it('lets an ImageList entry name only a pull secret its writer may get', async () => {
    const secretOf = (namespace: string): { namespace: string; name: string } => ({ namespace, name: 'registry' });
    const toB = entryList([{ image: 'registry.example.com/b:1', pullSecret: secretOf(tenantB) }]);
    // The policy is in force once the apiserver has loaded it.
    await waitFor(
      async () => ((await refused(as(writer(), ['create', '--dry-run=server'], toB))).includes(renamed('ebb-imagelist-pull-secrets')) ? true : undefined),
      { ...WAIT, signal, what: 'the pull-secret policy in force' },
    );
    const message = await refused(as(writer(), ['create'], toB));
    expect(message).toContain('an ImageList entry may name only a pull secret its writer may get');
    // Nothing about the Secret itself: whether it exists or its type is not in the answer.
    expect(message).not.toMatch(/dockerconfigjson|not found/i);

    await as(writer(), ['create'], entryList([{ image: 'registry.example.com/a:1', pullSecret: secretOf(tenantA) }]));
    // An admin adds tenant-b's entry; the writer's later update keeps it, and is admitted: only new names are asked.
    await as(
      ['system:admin', 'system:masters'],
      ['apply', '--server-side', '--field-manager', 'admin'],
      entryList([{ image: 'registry.example.com/b:1', pullSecret: secretOf(tenantB) }]),
    );
    const both = entryList([
      { image: 'registry.example.com/a:1', pullSecret: secretOf(tenantA) },
      { image: 'registry.example.com/b:1', pullSecret: secretOf(tenantB) },
      { image: 'registry.example.com/c:1' },
    ]);
    await expect(as(writer(), ['replace'], { ...(both as object), metadata: { name: list } })).resolves.toContain('replaced');
    // Moving tenant-b's Secret to another image is naming it anew.
    const moved = entryList([{ image: 'registry.example.com/d:1', pullSecret: secretOf(tenantB) }]);
    expect(await refused(as(writer(), ['replace'], moved))).toContain('may name only a pull secret its writer may get');
  });

  /** An App of `namespace` with one web check whose Authorization header comes from Secret `secret`. */
  const analysed = (
    namespace: string,
    name: string,
    secret: string,
    replicas = 0,
    { url = 'http://metrics.example/', header = 'Authorization', key = 'token' } = {},
  ): unknown => ({
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'registry.example.com/app:1' }] } },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          analysis: {
            checks: [
              {
                name: 'errors',
                web: {
                  url,
                  headers: [{ name: header, valueFrom: { secretKeyRef: { name: secret, key } } }],
                  successCondition: 'result == 0',
                },
              },
            ],
          },
        },
      },
    },
  });

  it("lets an App's analysis header take its value only from a Secret its writer may get", async () => {
    const toB = analysed(tenantB, 'checked', 'registry');
    await waitFor(
      async () => ((await refused(as(writer(), ['create', '--dry-run=server'], toB))).includes(renamed('ebb-app-analysis-secrets')) ? true : undefined),
      { ...WAIT, signal, what: 'the analysis-secret policy in force' },
    );
    const message = await refused(as(writer(), ['create'], toB));
    expect(message).toContain("an analysis header may take its value only from a Secret its App's writer may get");
    expect(message).not.toMatch(/not found/i);
    await expect(as(writer(), ['create'], analysed(tenantA, 'checked', 'registry'))).resolves.toContain('created');
    // An admin points a tenant-b App at tenant-b's Secret; the writer may still scale it, but not name another Secret.
    await as(['system:admin', 'system:masters'], ['create'], toB);
    await expect(as(writer(), ['apply', '--server-side', '--force-conflicts'], analysed(tenantB, 'checked', 'registry', 2))).resolves.toContain(
      'serverside-applied',
    );
    expect(await refused(as(writer(), ['apply', '--server-side', '--force-conflicts'], analysed(tenantB, 'checked', 'other', 2)))).toContain(
      'may take its value only from a Secret',
    );
    // The same Secret sent somewhere else is naming it anew: another URL (the writer's own server), another header
    // name or another key of it. Only the unchanged (URL, header, Secret, key) is exempt.
    for (const moved of [{ url: 'http://collector.attacker.example/' }, { header: 'X-Token' }, { key: 'password' }])
      expect(
        await refused(as(writer(), ['apply', '--server-side', '--force-conflicts'], analysed(tenantB, 'checked', 'registry', 2, moved))),
        JSON.stringify(moved),
      ).toContain('may take its value only from a Secret');
    await expect(as(writer(), ['apply', '--server-side', '--force-conflicts'], analysed(tenantB, 'checked', 'registry', 3))).resolves.toContain(
      'serverside-applied',
    );
  });

  const pod = (namespace: string, name: string, ownerReferences?: unknown[]): unknown => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(ownerReferences ? { ownerReferences } : {}) },
    spec: { containers: [{ name: 'main', image: 'registry.example.com/app:1' }] },
  });
  /** A controller reference to App `web` of tenant-a (made in the first worker test; no worker runs here, so it only exists). */
  let appRef: Record<string, unknown> = {};

  it("refuses the worker's identity a pod no App owns, and anything in kube-system or ebb's namespace", async () => {
    const app = await rest.create<Stored<{ metadata: { uid: string } }>>(appsOf(tenantA), {
      apiVersion: API_VERSION,
      kind: APP_KIND,
      metadata: { name: 'web' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'registry.example.com/app:1' }] } },
      },
    });
    appRef = { apiVersion: API_VERSION, kind: APP_KIND, name: 'web', uid: app.metadata.uid, controller: true };
    const orphan = pod(tenantA, 'orphan');
    await waitFor(
      async () => ((await refused(as(worker(), ['create', '--dry-run=server'], orphan))).includes(renamed('ebb-worker-app-owned')) ? true : undefined),
      { ...WAIT, signal, what: 'the worker policy in force' },
    );
    expect(await refused(as(worker(), ['create'], orphan))).toContain('the ebb worker may only create objects with an App controller reference');
    expect(await refused(as(worker(), ['create'], pod('kube-system', 'owned', [appRef])))).toContain('may not write in namespace kube-system');
    expect(await refused(as(worker(), ['create'], pod(own, 'owned', [appRef])))).toContain(`may not write in namespace ${own}`);
    // A pod another controller made is not the worker's to delete or adopt away.
    await rest.create(core('pods', tenantA), pod(tenantA, 'theirs'));
    expect(await refused(as(worker(), ['delete', 'pod', 'theirs', '-n', tenantA]))).toContain('only delete objects an App controls');
    expect(await refused(as(worker(), ['label', 'pod', 'theirs', '-n', tenantA, 'x=y']))).toContain('only change objects an App controls');
  });

  it("refuses the worker's identity another controller's pod: neither taken over by an App nor deleted, nor handed to it", async () => {
    // Another controller (a Deployment of no replicas, which never touches pods itself) controls `taken`.
    const deployment = await rest.create<Stored<{ metadata: { uid: string } }>>(
      { group: 'apps', version: 'v1', resource: 'deployments', namespace: tenantA },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'other' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'other' } },
          template: { metadata: { labels: { app: 'other' } }, spec: { containers: [{ name: 'main', image: 'registry.example.com/app:1' }] } },
        },
      },
    );
    const otherRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'other', uid: deployment.metadata.uid, controller: true };
    await rest.create(core('pods', tenantA), pod(tenantA, 'taken', [otherRef]));
    const takeOver = JSON.stringify({ metadata: { ownerReferences: [appRef] } });
    expect(await refused(as(worker(), ['patch', 'pod', 'taken', '-n', tenantA, '--type', 'merge', '-p', takeOver]))).toContain('never another controller');
    expect(await refused(as(worker(), ['delete', 'pod', 'taken', '-n', tenantA]))).toContain('only delete objects an App controls');
    // Nor may the worker give an App's pod to another controller.
    await rest.create(core('pods', tenantA), pod(tenantA, 'web-given', [appRef]));
    const handOver = JSON.stringify({ metadata: { ownerReferences: [otherRef] } });
    expect(await refused(as(worker(), ['patch', 'pod', 'web-given', '-n', tenantA, '--type', 'merge', '-p', handOver]))).toContain('never another controller');
  });

  it('admits the worker on what an App owns: create, adopt, release, delete', async () => {
    await expect(as(worker(), ['create'], pod(tenantA, 'web-0', [appRef]))).resolves.toContain('created');
    await expect(as(worker(), ['label', 'pod', 'web-0', '-n', tenantA, 'x=y'])).resolves.toContain('labeled');
    // Adoption: the new object names the App; release: the old one did.
    await rest.create(core('pods', tenantA), pod(tenantA, 'stray'));
    const adopt = JSON.stringify({ metadata: { ownerReferences: [appRef] } });
    await expect(as(worker(), ['patch', 'pod', 'stray', '-n', tenantA, '--type', 'merge', '-p', adopt])).resolves.toContain('patched');
    const release = JSON.stringify({ metadata: { ownerReferences: null } });
    await expect(as(worker(), ['patch', 'pod', 'web-0', '-n', tenantA, '--type', 'merge', '-p', release])).resolves.toContain('patched');
    await expect(as(worker(), ['delete', 'pod', 'stray', '-n', tenantA, '--wait=false'])).resolves.toContain('deleted');
    const revision = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'web-1', namespace: tenantA }, revision: 1, data: {} };
    expect(await refused(as(worker(), ['create'], revision))).toContain('App controller reference');
    const owned = { ...revision, metadata: { ...revision.metadata, ownerReferences: [appRef] } };
    await expect(as(worker(), ['create'], owned)).resolves.toContain('created');
    // A retained claim has no owner at all, as the StatefulSet controller makes it.
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-web-0', namespace: tenantA },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
    await expect(as(worker(), ['create'], claim)).resolves.toContain('created');
  });

  it("lets the watcher's identity write on an App only what the rollouts page's actions write", async () => {
    const name = 'paged';
    await rest.create(appsOf(tenantA), {
      apiVersion: API_VERSION,
      kind: APP_KIND,
      metadata: { name, annotations: { owner: 'team-a' }, labels: { tier: 'web' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'registry.example.com/app:1' }] } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      },
    });
    const patch = (body: unknown): Promise<string> =>
      as(account('ebb-watcher'), ['patch', 'app.apps.ebb.dev', name, '-n', tenantA, '--type', 'merge', '-p', JSON.stringify(body)]);
    const image = { spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.example.com/evil:1' }] } } } };
    await waitFor(async () => ((await refused(patch(image))).includes(renamed('ebb-watcher-app-actions')) ? true : undefined), {
      ...WAIT,
      signal,
      what: "the watcher's App policy in force",
    });
    // What the page's actions write: pause, abort (an annotation), restart (the template's stamp), resume.
    await expect(patch({ spec: { updateStrategy: { rollingUpdate: { paused: true } } } })).resolves.toContain('patched');
    await expect(patch({ metadata: { annotations: { 'rollout.apps.ebb.dev/abort': 'paged-1' } } })).resolves.toContain('patched');
    await expect(
      patch({ spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-29T20:00:00Z' } } } } }),
    ).resolves.toContain('patched');
    await expect(
      patch({ metadata: { annotations: { 'rollout.apps.ebb.dev/abort': null } }, spec: { updateStrategy: { rollingUpdate: { paused: false } } } }),
    ).resolves.toContain('patched');
    // Anything else, alone or beside an allowed change, is refused.
    const refusals: [unknown, string][] = [
      [image, 'only the restart stamp'],
      [{ spec: { replicas: 5 } }, 'beyond pausing it'],
      [{ spec: { updateStrategy: { rollingUpdate: { paused: true, partition: 3 } } } }, 'only rollingUpdate.paused'],
      [{ metadata: { annotations: { owner: 'attacker' } } }, 'only the rollout.apps.ebb.dev/ annotations'],
      [{ metadata: { annotations: { owner: null } } }, 'only the rollout.apps.ebb.dev/ annotations'],
      [{ metadata: { labels: { tier: 'other' } } }, 'labels, finalizers or owners'],
      [{ metadata: { finalizers: ['example.com/hold'] } }, 'labels, finalizers or owners'],
      [{ spec: { template: { metadata: { annotations: { 'example.com/x': 'y' } } } } }, 'only the restart stamp'],
      [{ spec: { template: { metadata: { labels: { extra: 'y' } } } } }, 'only the restart stamp'],
    ];
    for (const [body, message] of refusals) expect(await refused(patch(body)), JSON.stringify(body)).toContain(message);
    // A person with the same rights is not bound by it: the policy matches the watcher's account only.
    await expect(
      as(writer(), ['patch', 'app.apps.ebb.dev', name, '-n', tenantA, '--type', 'merge', '-p', JSON.stringify({ spec: { replicas: 1 } })]),
    ).resolves.toContain('patched');
  });

  it('renders into another namespace with the same policies', async () => {
    // One namespace for everything: the daemon's Namespace and its copy of the default-deny policy go first (both
    // would be renamed to the same object), then `namespace:`.
    const single = join(dir, 'single');
    const overlay = join(dir, 'overlay');
    await mkdir(single);
    await mkdir(overlay);
    await writeFile(
      join(single, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `resources: [${relative(single, join(PROJECT_ROOT, 'deploy'))}]`,
        'patches:',
        '  - patch: "{apiVersion: v1, kind: Namespace, metadata: {name: ebb-node}, $patch: delete}"',
        '  - patch: "{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: ebb-default-deny, namespace: ebb-node}, $patch: delete}"',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(overlay, 'kustomization.yaml'),
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: platform-ebb\nresources: [../single]\n',
    );
    const moved = await render(kubectl, relative(PROJECT_ROOT, overlay));
    const original = await render(kubectl, 'deploy');
    const policies = (objects: Manifest[]): Manifest[] => objects.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
    expect(
      policies(moved)
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual([...POLICIES, ...POLICIES].sort());
    // The same rules (kubectl's kustomize also stamps the namespace on these cluster-scoped kinds, which the apiserver ignores).
    const specs = (objects: Manifest[]): unknown[] => policies(objects).map((p) => [p.kind, p.metadata.name, p['spec']]);
    expect(specs(moved)).toEqual(specs(original));
    expect(moved.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata.namespace)).toEqual(['platform-ebb', 'platform-ebb', 'platform-ebb']);
    // The accounts the policies match by name, wherever they live (the worker's account above was in a namespace of this test's own).
    const accounts = moved.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata.name);
    for (const p of policies(moved).filter((o) => o.kind === 'ValidatingAdmissionPolicy')) {
      const text = JSON.stringify(p['spec']);
      expect(text, p.metadata.name).not.toMatch(/ebb-system|ebb-node|platform-ebb/);
    }
    expect(accounts).toEqual(expect.arrayContaining(['ebb-worker', 'ebb-daemon', 'ebb-watcher']));
  });
});
