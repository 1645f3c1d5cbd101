/**
 * deploy/ as the README installs it, on the sandbox apiserver: `kubectl kustomize` renders deploy/ and
 * deploy/keda; deploy/ applies server-side, as a server dry run and then for real. The real `ebb watcher`,
 * `ebb worker` and `ebb daemon` processes then run with the tokens of the installed ServiceAccounts (the
 * daemon's bound to a daemon pod on its node, so it carries the node-name claim) and drive an App with claims
 * through create, scale, an in-place image rollout with pre-warming and delete: no process is ever refused.
 * The worker runs under its admission policy (ebb-worker-app-owned), in force before it starts. Last, every
 * row of the access table (test/unit/deploy/access.ts, also in the README) is asked of the apiserver with
 * each account's own token: RBAC rows by access review, admission rows by (dry-run) writes.
 *
 * The sandbox runs no workload controllers, so the Deployments, the StatefulSet and the DaemonSet make no
 * pods: the test's processes play them, and the daemon's token is bound to a pod made from the DaemonSet's
 * template on the daemon's node. deploy/keda is rendered only: its ScaledObject needs KEDA's CRDs, which the
 * sandbox does not serve, so not even a dry run is possible here.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { API_VERSION, appRef, IMAGE_LIST_KIND, IMAGE_PULL_JOB_KIND, imageListRef, imagePullJobRef } from '../../../src/api/group.ts';
import type { ImagePullJob } from '../../../src/api/image-pull-job.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import { ACCESS, resourceName, type AccessRow, type Component } from '../../unit/deploy/access.ts';
import { claimsIn, createApp, image, patchApp, podsOf, settled } from '../app/harness.ts';
import { startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { daemonPulls, deleteList, waitImageStatus } from '../imagelist/helpers.ts';
import { createPullSecret, freshNamespace, rejection, sandbox } from '../support.ts';
import { httpGet, metricValue, printLogsOnFailure, spawnEbb, type EbbProcess } from '../watcher/helpers.ts';
import {
  accessOf,
  clientOf,
  CLUSTER_KINDS,
  DAEMON_NAMESPACE,
  kubectlFor,
  NAMESPACE,
  nameOf,
  render,
  tokenKubeconfig,
  writeManifests,
  type Manifest,
} from './install.ts';
import { renderWith } from './components.ts';
import { rollOutAlone, tokenSecretKubeconfig } from './thread-install.ts';

const ACCOUNT: Record<Component, string> = { watcher: 'ebb-watcher', worker: 'ebb-worker', daemon: 'ebb-daemon' };
const NAMESPACE_OF: Record<Component, string> = { watcher: NAMESPACE, worker: NAMESPACE, daemon: DAEMON_NAMESPACE };
const NAMESPACES = [NAMESPACE, DAEMON_NAMESPACE];
/** What a refused request leaves in a log: the apiserver's reason, or its HTTP status. */
const REFUSED = /forbidden|"(?:status|statusCode|code)":\s*403\b/i;
const POLICY_MESSAGE = 'the ebb daemon may only write the ImageList of its own node';
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

describe('deploy/ installed on the sandbox apiserver', () => {
  const { rest, kubeconfig, redisUrl } = sandbox();
  const signal = AbortSignal.timeout(900_000);
  const kubectl = kubectlFor(kubeconfig, signal);
  const suffix = randomBytes(3).toString('hex');
  const otherList = `it-other-node-${suffix}`;
  const tool = `registry.example.com/tools/debug:${suffix}`;
  const procs: EbbProcess[] = [];
  const kubeconfigs: Partial<Record<Component, string>> = {};
  let dir = '';
  let node: DedicatedNode | undefined;
  let ns = '';
  let objects: Manifest[] = [];
  let applied = '';
  let unboundDaemon = '';

  const gone = (ref: ResourceRef) => async (): Promise<true | undefined> =>
    rest.get(ref).then(
      () => undefined,
      (err: unknown) => {
        if (isKubeError(err, 'NotFound')) return true;
        throw err;
      },
    );
  const kubeconfigOf = (c: Component): string => {
    const file = kubeconfigs[c];
    if (!file) throw new Error(`no token for the ${c} yet`);
    return file;
  };
  const createToken = async (c: Component, ...bound: string[]): Promise<string> =>
    tokenKubeconfig(
      kubeconfig,
      (await kubectl('create', 'token', ACCOUNT[c], '-n', NAMESPACE_OF[c], '--duration', '1h', ...bound)).trim(),
      join(dir, `${c}${bound.length ? '' : '-unbound'}.kubeconfig`),
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-deploy-'));
    // Another file's cleanup may have deleted ebb's namespaces without waiting: they must be gone before they are made again.
    for (const n of NAMESPACES) await waitFor(gone(core('namespaces', undefined, n)), { ...WAIT, timeoutMs: 120_000, signal, what: `namespace ${n} gone` });
    node = await startDedicatedNode({ prefix: 'it-deploy', index: 43, timings: { pullMs: 1_500 } });
    ns = await freshNamespace('deploy');
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await rest.delete(core('namespaces', undefined, ns)).catch(() => undefined);
    for (const list of [otherList, node?.name ?? '']) await deleteList(list).catch(() => undefined);
    if (applied) {
      // Everything but the CRDs (the sandbox's own) and the namespace, which goes last with what is left in it.
      const installed = join(dir, 'installed.yaml');
      await writeManifests(
        installed,
        objects.filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Namespace'),
      );
      await kubectl('delete', '--ignore-not-found', '--wait=false', '-f', installed).catch(() => undefined);
      for (const n of NAMESPACES) {
        const pods = await rest.list<Stored<Pod>>(core('pods', n)).catch(() => ({ items: [] as Stored<Pod>[] }));
        for (const p of pods.items) await rest.delete(core('pods', n, p.metadata.name), { gracePeriodSeconds: 0 }).catch(() => undefined);
      }
    }
    await node?.stop();
    for (const n of NAMESPACES) await rest.delete(core('namespaces', undefined, n)).catch(() => undefined);
    for (const n of NAMESPACES)
      await waitFor(gone(core('namespaces', undefined, n)), { ...WAIT, timeoutMs: 120_000, what: `namespace ${n} gone` }).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl kustomize renders deploy/ and deploy/keda', async () => {
    objects = await render(kubectl, 'deploy');
    expect(objects.map(nameOf)).toEqual(
      expect.arrayContaining([
        `Namespace/${NAMESPACE}`,
        `Namespace/${DAEMON_NAMESPACE}`,
        'CustomResourceDefinition/apps.apps.ebb.dev',
        'CustomResourceDefinition/imagelists.apps.ebb.dev',
        ...Object.values(ACCOUNT).flatMap((sa) => [`ServiceAccount/${sa}`, `ClusterRole/${sa}`, `ClusterRoleBinding/${sa}`]),
        'ValidatingAdmissionPolicy/ebb-daemon-own-node',
        'ValidatingAdmissionPolicyBinding/ebb-daemon-own-node',
        'Deployment/ebb-watcher',
        'Deployment/ebb-worker',
        'DaemonSet/ebb-daemon',
        'StatefulSet/ebb-redis',
      ]),
    );
    // Everything namespaced is in ebb-system, but the node daemon's objects: they are in a namespace of their own.
    const elsewhere = objects.filter((o) => !CLUSTER_KINDS.has(o.kind) && o.metadata.namespace !== NAMESPACE);
    expect(elsewhere.every((o) => o.metadata.namespace === DAEMON_NAMESPACE)).toBe(true);
    expect(elsewhere.map(nameOf).sort()).toEqual([
      'DaemonSet/ebb-daemon',
      'NetworkPolicy/ebb-daemon-egress',
      'NetworkPolicy/ebb-daemon-metrics',
      'NetworkPolicy/ebb-default-deny',
      'ServiceAccount/ebb-daemon',
    ]);

    const keda = await render(kubectl, 'deploy/keda');
    expect(keda.filter((o) => o.metadata.namespace !== NAMESPACE).map(nameOf)).toEqual([]);
    const scaled = keda.find((o) => o.kind === 'ScaledObject');
    expect(scaled).toMatchObject({ apiVersion: 'keda.sh/v1alpha1', spec: { scaleTargetRef: { name: 'ebb-worker' } } });
    // It scales the worker Deployment of deploy/, asking the watcher Service's scaler port.
    expect(objects.map(nameOf)).toContain('Deployment/ebb-worker');
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'ebb-watcher') as { spec?: { ports?: { name: string; port: number }[] } };
    const scalerPort = service.spec?.ports?.find((p) => p.name === 'scaler')?.port;
    const triggers = (scaled?.['spec'] as { triggers: { metadata?: { scalerAddress?: string } }[] }).triggers;
    expect(triggers.map((t) => t.metadata?.scalerAddress)).toContain(`ebb-watcher.${NAMESPACE}.svc:${scalerPort}`);
  });

  it('applies server-side: as a server dry run, then for real', async () => {
    const file = join(dir, 'deploy.yaml');
    await writeManifests(file, objects);
    // A dry run creates nothing, so the namespaced objects would find no namespace: the namespaces come first.
    const namespaceFile = join(dir, 'namespace.yaml');
    await writeManifests(
      namespaceFile,
      objects.filter((o) => o.kind === 'Namespace'),
    );
    await kubectl('apply', '--server-side', '-f', namespaceFile);

    const dry = (await kubectl('apply', '--server-side', '--dry-run=server', '-f', file)).trim().split('\n');
    expect(dry).toHaveLength(objects.length);
    expect(dry.filter((l) => !l.endsWith('serverside-applied (server dry run)'))).toEqual([]);
    await expect(gone(core('serviceaccounts', NAMESPACE, ACCOUNT.worker))()).resolves.toBe(true);

    applied = file;
    const real = (await kubectl('apply', '--server-side', '-f', file)).trim().split('\n');
    expect(real.filter((l) => !l.endsWith(' serverside-applied'))).toEqual([]);
    expect((await kubectl('get', '-f', file, '-o', 'name')).trim().split('\n')).toHaveLength(objects.length);
  });

  it('runs the watcher, worker and daemon with their own tokens through an App lifecycle, never refused', async () => {
    const dedicated = node!;
    kubeconfigs.watcher = await createToken('watcher');
    kubeconfigs.worker = await createToken('worker');
    // The worker's admission policy is in force before the worker starts: everything below runs under it.
    const orphan = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'orphan' }, spec: { containers: [{ name: 'main', image: image('v1') }] } };
    const orphanRefusal = async (): Promise<true | undefined> =>
      (await rejection(clientOf(kubeconfigOf('worker')).create(core('pods', ns), orphan, { dryRun: 'All' })).catch(() => undefined))?.message.includes(
        "ValidatingAdmissionPolicy 'ebb-worker-app-owned'",
      )
        ? true
        : undefined;
    await waitFor(orphanRefusal, { ...WAIT, signal, what: 'the worker policy in force' });
    // The daemon's pod on the node, made from the DaemonSet's template as its controller would (the sandbox runs
    // no workload controllers); a token bound to it names the node.
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet' && o.metadata.name === ACCOUNT.daemon) as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> } };
    };
    const { template: podTemplate } = daemonSet.spec;
    expect(podTemplate.spec['serviceAccountName']).toBe(ACCOUNT.daemon);
    const pod = await rest.create<Stored<Pod>>(core('pods', DAEMON_NAMESPACE), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${ACCOUNT.daemon}-${suffix}`, labels: podTemplate.metadata.labels },
      spec: { ...podTemplate.spec, nodeName: dedicated.name },
    });
    const boundTo = ['--bound-object-kind', 'Pod', '--bound-object-name', pod.metadata.name, '--bound-object-uid', pod.metadata.uid ?? ''];
    kubeconfigs.daemon = await createToken('daemon', ...boundTo);
    unboundDaemon = await createToken('daemon');

    const queue = { EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: `{ebb-deploy-${suffix}}`, EBB_LOG_LEVEL: 'info' };
    procs.push(
      spawnEbb('watcher', { ...queue, KUBECONFIG: kubeconfigOf('watcher'), EBB_NAMESPACES: ns, EBB_BOARD: 'false' }),
      spawnEbb('worker', { ...queue, KUBECONFIG: kubeconfigOf('worker') }),
      spawnEbb('daemon', {
        KUBECONFIG: kubeconfigOf('daemon'),
        EBB_LOG_LEVEL: 'info',
        EBB_NODE_NAME: dedicated.name,
        EBB_CRI_ENDPOINT: `unix://${dedicated.node.criSocket}`,
        EBB_STATUS_FLUSH: '200ms',
      }),
    );
    printLogsOnFailure(procs);
    const [, , daemonPort] = await Promise.all(procs.map((p) => p.httpPort(60_000)));

    // A person's entry in the node's ImageList: the daemon pulls it and reports it.
    const entry = { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: dedicated.name }, spec: { images: [{ image: tool }] } };
    await rest.apply(imageListRef(dedicated.name), entry, 'it-person');
    await waitImageStatus(dedicated.name, tool, (s) => s.phase === 'Pulled', 'Pulled by the daemon', 60_000);

    const name = 'web';
    const template = (tag: string): AppSpec['template'] => ({
      metadata: { labels: { app: name } },
      spec: { ...dedicated.placement, containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
    });
    await createApp(ns, name, {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      template: template('v1'),
      imagePrewarm: { enabled: true },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    const created = await settled(ns, name, undefined, 90_000);
    expect(created.pods.map((p) => p.spec?.['nodeName'])).toEqual([dedicated.name, dedicated.name]);

    await patchApp(ns, name, { replicas: 3 });
    const scaled = await settled(ns, name, undefined, 90_000);
    expect(scaled.pods).toHaveLength(3);
    expect((await claimsIn(ns)).map((c) => c.metadata.name).sort()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);

    const pullsBefore = await daemonPulls(daemonPort ?? 0);
    await patchApp(ns, name, { template: template('v2') });
    const rolled = await settled(ns, name, undefined, 90_000);
    expect(rolled.app.status?.updateRevision).not.toBe(scaled.app.status?.updateRevision);
    // In place: the same pods, now running the new image.
    expect(rolled.pods.map((p) => p.metadata.uid)).toEqual(scaled.pods.map((p) => p.metadata.uid));
    expect(rolled.pods.map((p) => (p.spec?.['containers'] as { image: string }[])[0]?.image)).toEqual([image('v2'), image('v2'), image('v2')]);
    // Pre-warmed: the worker listed the new image for the node, and the daemon pulled it.
    expect(await daemonPulls(daemonPort ?? 0)).toBeGreaterThan(pullsBefore);
    const metrics = (await httpGet(daemonPort ?? 0, '/metrics')).body;
    expect(metricValue(metrics, 'ebb_daemon_status_writes_total', { result: 'ok' })).toBeGreaterThan(0);

    await rest.delete(appRef(ns, name));
    await waitFor(gone(appRef(ns, name)), { ...WAIT, signal, what: `App ${name} deleted` });
    await waitFor(async () => ((await podsOf(ns, name)).length === 0 ? true : undefined), { ...WAIT, signal, what: `the pods of ${name} gone` });
    // whenDeleted: Delete: the worker made the App the claims' owner, so they go with it.
    await waitFor(async () => ((await claimsIn(ns)).length === 0 ? true : undefined), { ...WAIT, signal, what: `the claims of ${name} gone` });

    // An ImagePullJob on the node: the worker reads nodes, writes the job's status and deletes it after its TTL.
    // The dedicated node is tainted: the job tolerates the taint, as a job aimed at a dedicated pool must.
    const job = {
      images: [`${tool}-job`],
      nodeSelector: { 'kubernetes.io/hostname': dedicated.name },
      tolerations: dedicated.placement.tolerations,
      ttlSecondsAfterFinished: 2,
    };
    await rest.create(imagePullJobRef(ns), { apiVersion: API_VERSION, kind: IMAGE_PULL_JOB_KIND, metadata: { name: 'warm' }, spec: job });
    const complete = async (): Promise<true | undefined> =>
      (await rest.get<ImagePullJob>(imagePullJobRef(ns, 'warm')).catch(() => undefined))?.status?.succeeded === 1 ? true : undefined;
    await waitFor(complete, { ...WAIT, intervalMs: 100, signal, what: 'ImagePullJob warm succeeded on the node' });
    await waitFor(gone(imagePullJobRef(ns, 'warm')), { ...WAIT, signal, what: 'ImagePullJob warm deleted after its TTL' });

    for (const p of procs) {
      expect(p.running(), `${p.name} still running`).toBe(true);
      const refused = [...p.logs.map((l) => JSON.stringify(l)), ...p.rawStdout(), p.stderr()].filter((l) => REFUSED.test(l));
      expect(refused, `${p.name} was refused`).toEqual([]);
      expect(p.logs.length, `${p.name} logged`).toBeGreaterThan(0);
    }
  });

  it('with deploy/components/watcher-worker-thread: the watcher alone reconciles an App, its thread as the worker ServiceAccount', async () => {
    // The component's own objects (the worker's token Secret, the thread's kubeconfig), applied beside deploy/.
    const installed = new Set(objects.map(nameOf));
    const added = ((await renderWith('watcher-worker-thread')) as unknown as Manifest[]).filter((o) => !installed.has(nameOf(o)));
    expect(added.map(nameOf).sort()).toEqual(['ConfigMap/ebb-worker-thread-kubeconfig', 'Secret/ebb-worker-token']);
    const file = join(dir, 'worker-thread.yaml');
    await writeManifests(file, added);
    await kubectl('apply', '--server-side', '-f', file);
    const threadKubeconfig = await tokenSecretKubeconfig(kubeconfig, 'ebb-worker-token', join(dir, 'worker-thread.kubeconfig'), signal);
    const pods = { group: '', resource: 'pods' };
    expect(await accessOf(clientOf(threadKubeconfig), 'create', pods, ns)).toEqual({ '*': true, [ns]: true });
    expect(await accessOf(clientOf(kubeconfigOf('watcher')), 'create', pods, ns)).toEqual({ '*': false, [ns]: false });

    const solo = await freshNamespace('thread');
    const watcher = spawnEbb('watcher', {
      EBB_REDIS_URL: redisUrl,
      EBB_QUEUE_PREFIX: `{ebb-thread-${suffix}}`,
      EBB_LOG_LEVEL: 'info',
      KUBECONFIG: kubeconfigOf('watcher'),
      EBB_BOARD: 'false',
      EBB_WATCHER_WORKER_THREAD: 'true',
      EBB_WATCHER_WORKER_THREAD_KUBECONFIG: threadKubeconfig,
      EBB_NAMESPACES: solo,
    });
    procs.push(watcher);
    printLogsOnFailure([watcher]);
    const rolled = await rollOutAlone(watcher, solo, node!, signal);
    expect(rolled.images).toEqual([image('v2'), image('v2')]);
    // Reconciled by the thread (no worker process serves this queue), and nothing the watcher or its thread sent was refused.
    expect(rolled.threadReconciles).toBeGreaterThan(0);
    const refused = [...watcher.logs.map((l) => JSON.stringify(l)), ...watcher.rawStdout(), watcher.stderr()].filter((l) => REFUSED.test(l));
    expect(refused).toEqual([]);
  });

  for (const row of ACCESS.filter((r) => r.by === 'rbac')) {
    const group = row.on.group === '' ? 'core' : row.on.group;
    it(`${row.component} ${row.allowed ? 'may' : 'may not'} ${row.verbs.join(', ')} ${resourceName(row.on)} (${group})`, async () => {
      const client = clientOf(kubeconfigOf(row.component));
      for (const verb of row.verbs) {
        const scopes = await accessOf(client, verb, row.on, ns);
        const expected = Object.fromEntries(Object.keys(scopes).map((s) => [s, row.allowed]));
        expect(scopes, `${row.component} ${verb} ${resourceName(row.on)}`).toEqual(expected);
      }
    });
  }

  it('the admission rows: the daemon writes the status of its own node only', async () => {
    const rows = ACCESS.filter((r) => r.by === 'admission' && r.component === 'daemon');
    expect(rows.map((r) => r.object).sort()).toEqual(['another node', 'any node, token bound to no pod', 'its own node']);
    const own = node!.name;
    await rest.create(imageListRef(), { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: otherList }, spec: { images: [{ image: tool }] } });
    const bound = clientOf(kubeconfigOf('daemon'));
    const unbound = clientOf(unboundDaemon);
    const patch = (list: string) => ({ status: { images: [{ image: tool, phase: 'Pulled' }] }, metadata: { name: list } });
    const write = (client: typeof bound, list: string): Promise<unknown> =>
      client.patch(imageListRef(list, 'status'), patch(list), PatchType.merge, { dryRun: 'All' });

    // The policy is in force once the apiserver has loaded it (it was installed a while ago; this only guards a slow start).
    await waitFor(async () => ((await rejection(write(bound, otherList)).catch(() => undefined))?.message.includes(POLICY_MESSAGE) ? true : undefined), {
      ...WAIT,
      signal,
      what: 'the admission policy in force',
    });
    const request: Partial<Record<NonNullable<AccessRow['object']>, () => Promise<unknown>>> = {
      'its own node': () => write(bound, own),
      'another node': () => write(bound, otherList),
      'any node, token bound to no pod': () => write(unbound, own),
    };
    for (const row of rows) {
      const send = request[row.object ?? 'its own node'] ?? (() => Promise.reject(new Error(`no request for ${row.object ?? ''}`)));
      if (row.allowed) {
        await expect(send(), row.object).resolves.toBeDefined();
        continue;
      }
      const err = await rejection(send());
      expect(err.code, row.object).toBe('Forbidden');
      expect(err.message).toContain(`ValidatingAdmissionPolicy 'ebb-daemon-own-node' with binding 'ebb-daemon-own-node' denied request: ${POLICY_MESSAGE}`);
    }
  });

  it("the watcher's admission rows: on an App only what the rollouts page's actions write", async () => {
    const rows = ACCESS.filter((r) => r.by === 'admission' && r.component === 'watcher');
    const name = `paged-${suffix}`;
    await rest.create(appRef(ns), {
      apiVersion: API_VERSION,
      kind: 'App',
      metadata: { name },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: image('v1') }] } },
      },
    });
    const watcher = clientOf(kubeconfigOf('watcher'));
    const patch = (body: unknown): Promise<unknown> => watcher.patch(appRef(ns, name), body, PatchType.merge, { dryRun: 'All' });
    const request: Partial<Record<NonNullable<AccessRow['object']>, () => Promise<unknown>>> = {
      "a rollouts page's action": () => patch({ spec: { updateStrategy: { rollingUpdate: { paused: true } } } }),
      'any other App change': () => patch({ spec: { template: { spec: { containers: [{ name: 'main', image: image('v2') }] } } } }),
    };
    expect(rows.map((r) => r.object).sort()).toEqual(Object.keys(request).sort());
    for (const row of rows) {
      const send = request[row.object ?? "a rollouts page's action"] ?? (() => Promise.reject(new Error('no request')));
      if (row.allowed) {
        await expect(send(), row.object).resolves.toBeDefined();
        continue;
      }
      const err = await rejection(send());
      expect(err.code, row.object).toBe('Forbidden');
      expect(err.message, row.object).toContain("ValidatingAdmissionPolicy 'ebb-watcher-app-actions'");
    }
  });

  it("the worker's admission rows: App-owned pods only, nothing in kube-system, no pull secret it may not read", async () => {
    const rows = ACCESS.filter((r) => r.by === 'admission' && r.component === 'worker');
    const worker = clientOf(kubeconfigOf('worker'));
    const appOwner = { apiVersion: API_VERSION, kind: 'App', name: 'owner', uid: '00000000-0000-0000-0000-00000000abcd', controller: true };
    const pod = (namespace: string, owned: boolean): Promise<unknown> =>
      worker.create(
        core('pods', namespace),
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { generateName: 'admission-', ...(owned ? { ownerReferences: [appOwner] } : {}) },
          spec: { containers: [{ name: 'main', image: image('v1') }] },
        },
        { dryRun: 'All' },
      );
    // tenant-b's Secret, which the worker may not read in the default install (pull secrets are opt-in). The
    // ImageList of another node is the daemon rows' (above).
    const tenantB = await freshNamespace('tenant-b');
    await createPullSecret(tenantB, 'registry', { 'registry.example.com': { username: 'b', password: 'b-only' } });
    const entry = { image: tool, pullSecret: { namespace: tenantB, name: 'registry' } };
    const request: Partial<Record<NonNullable<AccessRow['object']>, () => Promise<unknown>>> = {
      'an App owns': () => pod(ns, true),
      'no App owns': () => pod(ns, false),
      'in kube-system': () => pod('kube-system', true),
      'an entry naming a Secret it may not get': () => worker.patch(imageListRef(otherList), { spec: { images: [entry] } }, PatchType.merge, { dryRun: 'All' }),
    };
    expect(rows.map((r) => r.object).sort()).toEqual(Object.keys(request).sort());
    for (const row of rows) {
      const send = request[row.object ?? 'an App owns'] ?? (() => Promise.reject(new Error('no request')));
      if (row.allowed) {
        await expect(send(), row.object).resolves.toBeDefined();
        continue;
      }
      const err = await rejection(send());
      expect(err.code, row.object).toBe('Forbidden');
      expect(err.message, row.object).toMatch(/ValidatingAdmissionPolicy 'ebb-(worker-app-owned|imagelist-pull-secrets)'/);
    }
  });
});
