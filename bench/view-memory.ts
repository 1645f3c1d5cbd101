/**
 * The shared view's cost in Redis: memory per App and per pod, written through the watcher's view writer
 * (`redisViewFeed`) into a private redis-server, and what is left once every pod and App is deleted.
 *
 *   node bench/view-memory.ts [--apps 10000] [--pods-per-app 3] [--page 50]
 *
 * Apps are defaulted like stored ones, pods built by the worker's own pod builder and given a running, Ready
 * status with one container and the apiserver's managedFields (which the view drops), as a watch delivers them.
 * The Apps are listed first (measured), then the pods (measured), then a MODIFIED event per pod (the steady
 * state: a rewritten entry takes no more room), then DELETED events for every pod and App. Reported:
 * `used_memory` deltas per App and per pod, `MEMORY USAGE` of one App's hash, the keys left at the end.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedis } from '../harness/sandbox/redis.ts';
import { withAppSpecDefaults } from '../src/api/defaults.ts';
import { API_VERSION, APP_KIND } from '../src/api/group.ts';
import type { App } from '../src/api/app.ts';
import type { KubeObject, Pod, Stored } from '../src/kube/types.ts';
import { newPodForOrdinal } from '../src/workers/app/pods/builder.ts';
import { viewKey } from '../src/view/keys.ts';
import { redisViewFeed } from '../src/view/writer.ts';

const { values: args } = parseArgs({
  options: {
    apps: { type: 'string', default: '10000' },
    'pods-per-app': { type: 'string', default: '3' },
    page: { type: 'string', default: '50' },
  },
});
const APPS = Number(args.apps);
const PODS = Number(args['pods-per-app']);
const PAGE = Number(args.page);
const PREFIX = '{ebb}';
const NS = 'bench';

function app(i: number): Stored<App> {
  const name = `app-${i}`;
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: {
      name,
      namespace: NS,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1_000_000 + i),
      generation: 1,
      creationTimestamp: '2026-11-29T10:00:00Z',
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    } as Stored<App>['metadata'],
    spec: withAppSpecDefaults({
      replicas: PODS,
      selector: { matchLabels: { app: name } },
      serviceName: name,
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'registry.example.com/team/web:1.24.3', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
      },
    }),
    status: {
      replicas: PODS,
      readyReplicas: PODS,
      availableReplicas: PODS,
      currentRevision: `${name}-7d9f8c6b5`,
      updateRevision: `${name}-7d9f8c6b5`,
      observedGeneration: 1,
    },
  };
}

function pod(a: Stored<App>, ordinal: number, rv: number): Stored<Pod> {
  const built = newPodForOrdinal(a, a.spec.template, `${a.metadata.name}-7d9f8c6b5`, ordinal);
  const t = '2026-11-29T10:00:05Z';
  const conditions = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
    type,
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: t,
  }));
  return {
    ...built,
    metadata: {
      ...built.metadata,
      uid: `11111111-0000-4000-8000-${String(rv).padStart(12, '0')}`,
      resourceVersion: String(rv),
      creationTimestamp: t,
      managedFields: [
        {
          manager: 'ebb',
          operation: 'Update',
          apiVersion: 'v1',
          time: t,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': {} }, 'f:spec': { 'f:containers': {} } },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: t,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:conditions': {} } },
          subresource: 'status',
        },
      ],
    },
    spec: { ...built.spec, nodeName: `node-${ordinal % 50}`, restartPolicy: 'Always', terminationGracePeriodSeconds: 30 },
    status: {
      phase: 'Running',
      conditions,
      hostIP: '10.0.0.17',
      podIP: `10.244.${ordinal % 250}.${rv % 250}`,
      podIPs: [{ ip: `10.244.${ordinal % 250}.${rv % 250}` }],
      startTime: t,
      qosClass: 'Burstable',
      containerStatuses: [
        {
          name: 'web',
          ready: true,
          started: true,
          restartCount: 0,
          image: 'registry.example.com/team/web:1.24.3',
          imageID: 'registry.example.com/team/web@sha256:' + 'a'.repeat(64),
          containerID: 'containerd://' + 'b'.repeat(64),
          state: { running: { startedAt: t } },
        },
      ],
    },
  } as Stored<Pod>;
}

async function used(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 'NaN');
}

async function inPages(items: KubeObject[], write: (page: KubeObject[], first: boolean, last: boolean) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += PAGE) await write(items.slice(i, i + PAGE), i === 0, i + PAGE >= items.length);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-view-bench-'));
  const server = await startRedis({ dir });
  const redis = new Redis(server.url);
  try {
    const feed = redisViewFeed(redis, PREFIX);
    const apps = Array.from({ length: APPS }, (_, i) => app(i));
    let rv = 2_000_000;
    const pods = apps.flatMap((a) => Array.from({ length: PODS }, (_, o) => pod(a, o, rv++)));
    const base = await used(redis);
    const appList = feed.newList();
    await inPages(apps, (page, first, last) => feed.page('apps', 'app', appList, page, { first, last }));
    const withApps = await used(redis);
    const podList = feed.newList();
    await inPages(pods, (page, first, last) => feed.page('pods', 'pod', podList, page, { first, last }));
    const withPods = await used(redis);
    for (const p of pods) await feed.event('pods', 'pod', { type: 'MODIFIED', object: { ...p, metadata: { ...p.metadata, resourceVersion: String(rv++) } } });
    const steady = await used(redis);
    const oneKey = Number(await redis.call('MEMORY', 'USAGE', viewKey(PREFIX, NS, 'app-0'), 'SAMPLES', '0'));
    const rawPod = Buffer.byteLength(JSON.stringify(pods[0]));
    const rawApp = Buffer.byteLength(JSON.stringify(apps[0]));
    for (const p of pods) await feed.event('pods', 'pod', { type: 'DELETED', object: { ...p, metadata: { ...p.metadata, resourceVersion: String(rv++) } } });
    const afterPods = await used(redis);
    for (const a of apps) await feed.event('apps', 'app', { type: 'DELETED', object: a });
    const keysLeft = (await redis.keys(`${PREFIX}:view:app:*`)).length;
    const end = await used(redis);
    const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
    console.log(
      JSON.stringify(
        {
          apps: APPS,
          podsPerApp: PODS,
          appsListed: mib(withApps - base),
          perAppBytes: Math.round((withApps - base) / APPS),
          podsListed: mib(withPods - withApps),
          perPodBytes: Math.round((withPods - withApps) / pods.length),
          total: mib(withPods - base),
          afterOneModifiedPerPod: mib(steady - base),
          oneAppHashBytes: oneKey,
          podAsWatchedBytes: rawPod,
          appAsWatchedBytes: rawApp,
          afterPodsDeleted: mib(afterPods - base),
          viewKeysLeftAfterAppsDeleted: keysLeft,
          afterAllDeleted: mib(end - base),
        },
        null,
        2,
      ),
    );
  } finally {
    redis.disconnect();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
