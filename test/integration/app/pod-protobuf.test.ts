/**
 * The worker reads pods in protobuf: against the real apiserver, every field ebb reads (the fields the view
 * keeps of a pod, `POD_SHAPE`, held equal to pod.proto) comes out of the protobuf decoder exactly as the JSON encoding gives it, for pods with a rich spec and status (conditions,
 * resources, owner references, labels, annotations, a deletion timestamp, container states), by LIST (in
 * pages) and by GET; errors come back as typed KubeErrors; a client with protobuf off reads JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { decodePod, decodePodList } from '../../../src/kube/protobuf/envelope.ts';
import { KubeRest, loadKubeConfig, PatchType, type ListResult } from '../../../src/kube/rest.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { projectPod } from '../../../src/view/project.ts';
import { restAppClient } from '../../../src/workers/app/rest-client.ts';
import { freshNamespace, rejection, sandbox } from '../support.ts';

const HOLD = 'example.com/hold';
let ns = '';
let proto: KubeRest;
let decoded = 0;
const countingList = (body: Uint8Array): ListResult<Stored<Pod>> => (decoded++, decodePodList(body));
const countingGet = (body: Uint8Array): Stored<Pod> => (decoded++, decodePod(body));

const container = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  image: 'registry.example/app:1',
  resources: { requests: { cpu: '0.5', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } },
  resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
  readinessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 3, periodSeconds: 7 },
  startupProbe: { exec: { command: ['true'] }, periodSeconds: 2 },
  volumeMounts: [
    { name: 'data', mountPath: '/data' },
    { name: 'scratch', mountPath: '/scratch', readOnly: true, recursiveReadOnly: 'IfPossible' },
  ],
  ...extra,
});

/** A pod no scheduler takes (its status is written by the test), owned by a ConfigMap, held by a finalizer. */
async function richPod(ownerUid: string): Promise<void> {
  const { rest } = sandbox();
  await rest.create(core('pods', ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'rich',
      labels: { app: 'proto', 'example.com/tier': 'web', empty: '' },
      annotations: { note: 'a\nmulti-line value', 'example.com/json': '{"a":[1,2]}' },
      finalizers: [HOLD],
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid, controller: false, blockOwnerDeletion: false }],
    },
    spec: {
      schedulerName: 'nobody-schedules-this',
      terminationGracePeriodSeconds: 0,
      hostname: 'rich-0',
      subdomain: 'svc',
      readinessGates: [{ conditionType: 'example.com/gate' }],
      initContainers: [container('sidecar', { restartPolicy: 'Always' }), { name: 'setup', image: 'registry.example/setup:1' }],
      containers: [container('app', { imagePullPolicy: 'IfNotPresent' }), { name: 'plain', image: 'registry.example/plain:1', resources: {} }],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: 'data-rich-0' } },
        { name: 'scratch', emptyDir: {} },
      ],
    },
  });
  const at = (s: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, s)).toISOString().replace('.000Z', 'Z');
  await rest.patch(
    core('pods', ns, 'rich', 'status'),
    {
      status: {
        phase: 'Running',
        observedGeneration: 1,
        hostIP: '10.0.0.7',
        hostIPs: [{ ip: '10.0.0.7' }],
        podIP: '10.1.0.9',
        podIPs: [{ ip: '10.1.0.9' }],
        startTime: at(1),
        conditions: [
          { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'not yet', lastTransitionTime: at(2), observedGeneration: 1 },
          { type: 'example.com/gate', status: 'True', lastProbeTime: at(3), lastTransitionTime: at(3) },
          { type: 'PodScheduled', status: 'True' },
        ],
        initContainerStatuses: [
          {
            name: 'sidecar',
            image: 'registry.example/app:1',
            imageID: 'sha256:aa',
            ready: true,
            restartCount: 0,
            started: true,
            state: { running: { startedAt: at(4) } },
          },
          {
            name: 'setup',
            image: 'registry.example/setup:1',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: at(1), finishedAt: at(2), containerID: 'containerd://s1' } },
          },
        ],
        containerStatuses: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            imageID: 'sha256:bb',
            containerID: 'containerd://a1',
            ready: false,
            started: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
            lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: at(5), finishedAt: at(6) } },
            allocatedResources: { cpu: '500m', memory: '64Mi' },
            resources: { requests: { cpu: '500m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } },
            volumeMounts: [{ name: 'scratch', mountPath: '/scratch', readOnly: true, recursiveReadOnly: 'Disabled' }],
          },
          { name: 'plain', image: 'registry.example/plain:1', imageID: '', ready: false, restartCount: 0, state: {} },
        ],
      },
    },
    PatchType.merge,
  );
  // Deleted while its finalizer holds it: deletionTimestamp and deletionGracePeriodSeconds are set.
  await rest.delete(core('pods', ns, 'rich'));
}

/** A plain pod a simulated node runs to Ready (its status as a kubelet writes it). */
async function runningPod(name: string): Promise<void> {
  const { rest } = sandbox();
  await rest.create(core('pods', ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'proto' } },
    spec: { containers: [{ name: 'main', image: 'registry.example/run:1', readinessProbe: { tcpSocket: { port: 80 } } }] },
  });
  await waitFor(
    async () => {
      const pod = await rest.get<Pod>(core('pods', ns, name));
      return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? pod : undefined;
    },
    { timeoutMs: 60_000, what: `pod ${name} Ready` },
  );
}

/** Both encodings of the same list (read again until no pod changed between the two reads). */
async function readBoth(pageSize: number): Promise<{ json: Stored<Pod>[]; fromProto: Stored<Pod>[] }> {
  const { rest } = sandbox();
  for (let attempt = 0; ; attempt++) {
    const json = (await rest.list<Stored<Pod>>(core('pods', ns), { labelSelector: 'app=proto' })).items;
    const fromProto: Stored<Pod>[] = [];
    let cont: string | undefined;
    do {
      const page = await proto.list(core('pods', ns), { labelSelector: 'app=proto', limit: pageSize, continue: cont }, undefined, undefined, countingList);
      fromProto.push(...page.items);
      cont = page.metadata.continue || undefined;
    } while (cont);
    const rv = (pods: Stored<Pod>[]) => pods.map((p) => `${p.metadata.name}@${p.metadata.resourceVersion}`).sort();
    if (JSON.stringify(rv(json)) === JSON.stringify(rv(fromProto)) || attempt >= 5) return { json, fromProto };
  }
}

const byName = (pods: Stored<Pod>[]) => Object.fromEntries(pods.map((p) => [p.metadata.name, p]));

beforeAll(async () => {
  ns = await freshNamespace('pod-proto');
  proto = new KubeRest(loadKubeConfig(sandbox().kubeconfig), { protobuf: true });
  const owner = await sandbox().rest.create<Stored<{ metadata: { uid: string } }>>(core('configmaps', ns), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'owner' },
  });
  await Promise.all([richPod(owner.metadata.uid), runningPod('run-0'), runningPod('run-1')]);
}, 120_000);

afterAll(async () => {
  // Lets the held pod go, so that the namespace can be deleted.
  await sandbox()
    .rest.patch(core('pods', ns, 'rich'), { metadata: { finalizers: null } }, PatchType.merge)
    .catch((err: unknown) => {
      if (!isKubeError(err, 'NotFound')) throw err;
    });
});

describe('pods read in protobuf', () => {
  it('decode to what JSON gives for every field ebb reads, by LIST in pages', async () => {
    const before = decoded;
    const { json, fromProto } = await readBoth(2);
    expect(decoded - before).toBe(2);
    expect(fromProto.map((p) => p.metadata.name).sort()).toEqual(['rich', 'run-0', 'run-1']);
    const [j, p] = [byName(json), byName(fromProto)];
    for (const name of Object.keys(j)) expect(p[name], name).toEqual(projectPod(j[name]!));
    // The rich pod does carry what the comparison is about.
    const rich = p['rich']!;
    expect(rich.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rich.metadata.ownerReferences?.[0]).toMatchObject({ controller: false, blockOwnerDeletion: false });
    expect(rich.spec.containers[0]?.resources?.requests).toEqual({ cpu: '500m', memory: '64Mi' });
    expect(rich.spec.terminationGracePeriodSeconds).toBe(0);
    expect(rich.status?.conditions?.find((c) => c.type === 'Ready')?.lastProbeTime).toBeNull();
    expect(rich.status?.containerStatuses?.[0]).toMatchObject({ started: false, restartCount: 3, lastState: { terminated: { exitCode: 137 } } });
    expect(rich.metadata.managedFields).toBeUndefined();
  });

  it('decode to what JSON gives by GET, and through the worker client', async () => {
    const { rest } = sandbox();
    for (const name of ['rich', 'run-0']) {
      const json = await rest.get<Stored<Pod>>(core('pods', ns, name));
      const before = decoded;
      const got = await proto.get(core('pods', ns, name), undefined, countingGet);
      expect(decoded - before).toBe(1);
      if (got.metadata.resourceVersion === json.metadata.resourceVersion) expect(got).toEqual(projectPod(json));
    }
    const client = restAppClient(proto, AbortSignal.timeout(10_000));
    expect((await client.pods.list(ns, 'app=proto')).map((p) => p.metadata.name).sort()).toEqual(['rich', 'run-0', 'run-1']);
    expect((await client.pods.get(ns, 'run-1'))?.spec.containers[0]?.name).toBe('main');
  });

  it('turn a missing pod into NotFound and a refused list into a typed error', async () => {
    expect(await restAppClient(proto, AbortSignal.timeout(10_000)).pods.get(ns, 'no-such-pod')).toBeUndefined();
    const err = await rejection(proto.list(core('pods', ns), { labelSelector: '!!bad' }, undefined, undefined, decodePodList));
    expect(err.code).toBe('BadRequest');
    expect(err.message).toMatch(/selector|parse/i);
  });

  it('are read in JSON when the client reads no protobuf', async () => {
    const json = new KubeRest(loadKubeConfig(sandbox().kubeconfig));
    const before = decoded;
    const pods = (await json.list<Stored<Pod>>(core('pods', ns), { labelSelector: 'app=proto' }, undefined, undefined, countingList)).items;
    expect(decoded).toBe(before);
    expect(pods.find((p) => p.metadata.name === 'rich')?.metadata.managedFields).toBeDefined();
  });
});
