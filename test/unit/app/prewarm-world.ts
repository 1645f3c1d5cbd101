/** An App at template v2 with pre-warm on, its pods and ImageLists: the world of the pre-warm planner tests. */
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { Annotation } from '../../../src/api/keys.ts';
import { makeApp, podFor, stored, planned } from './fixtures.ts';
import type { ClusterStored, ControllerRevision, Stored } from '../../../src/kube/types.ts';
import type { Observed } from '../../../src/workers/app/model/plan.ts';
import { prewarmIdentity } from '../../../src/workers/app/prewarm/plan.ts';
import { imagesKey } from '../../../src/workers/shared/pull-state.ts';
import { newRevision, revisionData } from '../../../src/workers/app/revisions/revisions.ts';

export const NOW = new Date('2025-06-01T00:00:00Z');
export const v = (tag: string): AppSpec['template'] => ({
  metadata: { labels: { app: 'web' } },
  spec: { initContainers: [{ name: 'init', image: `example.com/init:${tag}` }], containers: [{ name: 'main', image: `example.com/web:${tag}` }] },
});
export const id = prewarmIdentity('ns', 'web');
export const KEY = imagesKey(['example.com/init:v2', 'example.com/web:v2']);

export function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  return stored<ControllerRevision>(newRevision(makeApp('web', spec), revisionData(makeApp('web', spec)), n, 0), `rev-${n}`);
}

export type PodTuple = [ordinal: number, revision: 'old' | 'new', node?: string, opts?: { inPlace?: boolean }];

export interface World {
  spec?: Partial<AppSpec>;
  pods: PodTuple[];
  /** ImageLists holding the App's entries; undefined = not read. */
  lists?: ClusterStored<ImageList>[] | undefined;
  prewarmStatus?: boolean;
  deleting?: boolean;
  canary?: { step: number; pausedAt?: string };
}

/** An App at template v2 with pre-warm on; pods on node n<ordinal> unless said otherwise. */
export function world(w: World): Observed {
  const spec: Partial<AppSpec> = { replicas: 4, podManagementPolicy: 'Parallel', imagePrewarm: { enabled: true, parallelism: 10, lookahead: 1 }, ...w.spec };
  const oldRev = revisionOf({ ...spec, template: v('v1') }, 1);
  const newRev = revisionOf({ ...spec, template: v('v2') }, 2);
  const app = makeApp('web', { ...spec, template: v('v2') }, w.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {});
  app.status = {
    currentRevision: oldRev.metadata.name,
    updateRevision: newRev.metadata.name,
    ...(w.prewarmStatus ? { prewarm: { nodesRequested: 1, nodesPulled: 0, nodesFailed: 0 } } : {}),
    ...(w.canary ? { canary: w.canary } : {}),
  };
  const pods = w.pods.map(([o, r, node, opts]) => {
    const pod = podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name, 'ready');
    pod.spec = { ...pod.spec, nodeName: node ?? `n${o}` };
    if (opts?.inPlace) pod.metadata.annotations = { ...pod.metadata.annotations, [Annotation.inPlaceUpdateState]: '{}' };
    return pod;
  });
  return { app, pods, revisions: [oldRev, newRev], claims: [], imageLists: w.lists };
}

/** An ImageList holding the App's entries for the v2 images (`key` KEY) or an earlier set; nothing pulled yet. */
export function held(node: string, key = KEY): ClusterStored<ImageList> {
  const images = key === KEY ? ['example.com/init:v2', 'example.com/web:v2'] : ['example.com/web:v0'];
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImageList',
    metadata: { name: node, uid: `uid-${node}`, resourceVersion: '1', labels: { [id.labelKey]: key } },
    spec: { images: images.map((image) => ({ image })) },
  };
}

export const allOld = (n: number): PodTuple[] => Array.from({ length: n }, (_, i): PodTuple => [i, 'old']);
export const rolling = (ru: object): Partial<AppSpec> => ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } });
export const prewarm = (p: { parallelism?: number; lookahead?: number; enabled?: boolean }): Partial<AppSpec> => ({
  imagePrewarm: { enabled: true, parallelism: 10, lookahead: 1, ...p },
});

/** The pre-warm writes of a plan, e.g. `request n2`, `remove n3`. */
export function prewarmWrites(o: Observed): string[] {
  return planned(o, NOW).actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [`request ${a.node}`] : a.kind === 'removePrewarm' ? [`remove ${a.node}`] : []));
}
