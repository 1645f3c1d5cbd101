/** Objects for the explain tests: an App `web` (revisions web-a → web-b) in namespace shop, its pods, an ImageList. */
import type { App } from '../../../src/api/app.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import type { Pod } from '../../../src/kube/types.ts';

export const NOW = new Date('2026-03-01T12:00:00.000Z');
export const at = (secondsFromNow: number): string => new Date(NOW.getTime() + secondsFromNow * 1000).toISOString();

type Cond = { type: string; status: string; reason: string; message?: string };
export const cond = (type: string, status: string, reason: string, message?: string): Cond => ({ type, status, reason, ...(message ? { message } : {}) });

export function app(over: { spec?: Partial<App['spec']>; conditions?: Cond[]; status?: Partial<NonNullable<App['status']>> } = {}): App {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop', generation: 2, uid: 'u-web' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'reg.local/web:2' }] } },
      ...over.spec,
    },
    status: {
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      updatedReplicas: 1,
      currentRevision: 'web-a',
      updateRevision: 'web-b',
      ...over.status,
      conditions: (over.conditions ?? [cond('Progressing', 'True', 'RollingUpdate', 'rolling update: 1 of 3 pods at revision web-b')]).map((c) => ({
        ...c,
        lastTransitionTime: '2026-03-01T11:00:00Z',
      })),
    } as App['status'],
  };
}

export interface PodOver {
  revision?: string;
  node?: string | undefined;
  ready?: boolean;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  containerStatuses?: NonNullable<Pod['status']>['containerStatuses'];
  readinessGates?: string[];
  deleting?: boolean;
}

export function pod(ordinal: number, o: PodOver = {}): Pod {
  const ready = o.ready ?? true;
  return {
    metadata: {
      name: `web-${ordinal}`,
      namespace: 'shop',
      uid: `u-${ordinal}`,
      resourceVersion: '1',
      creationTimestamp: '2026-03-01T10:00:00Z',
      labels: { app: 'web', 'apps.ebb.dev/app': 'web', 'apps.ebb.dev/revision': o.revision ?? 'web-a', ...o.labels },
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-03-01T11:59:50Z' } : {}),
    },
    spec: {
      ...('node' in o ? (o.node ? { nodeName: o.node } : {}) : { nodeName: `node-${ordinal}` }),
      containers: [{ name: 'main', image: 'reg.local/web:1' }],
      ...(o.readinessGates ? { readinessGates: o.readinessGates.map((conditionType) => ({ conditionType })) } : {}),
    },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-03-01T10:00:00Z' }, ...(o.conditions ?? [])],
      ...(o.containerStatuses ? { containerStatuses: o.containerStatuses } : {}),
    },
  };
}

export function imageList(node: string, images: { image: string; phase: string; attempts?: number; message?: string }[]): ImageList {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImageList',
    metadata: { name: node, uid: `il-${node}`, resourceVersion: '1' },
    spec: { images: images.map((i) => ({ image: i.image })) },
    status: { images: images.map((i) => ({ ...i, phase: i.phase as 'Pending' })) },
  };
}
