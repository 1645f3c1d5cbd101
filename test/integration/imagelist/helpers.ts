/** Reading ImageLists, pods and their events back from the apiserver, for the pre-warming tests. */
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList, ImageListEntry, ImageStatus } from '../../../src/api/image-list.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import { sandbox } from '../support.ts';
import { httpGet, metricValue } from '../watcher/helpers.ts';

export const WAIT = { timeoutMs: 30_000, intervalMs: 100 };

export async function readList(node: string): Promise<ImageList | undefined> {
  try {
    return await sandbox().rest.get<ImageList>(imageListRef(node));
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

export function createList(node: string, images: ImageListEntry[]): Promise<ImageList> {
  return sandbox().rest.create<ImageList>(imageListRef(), { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: node }, spec: { images } });
}

export async function deleteList(node: string): Promise<void> {
  await sandbox()
    .rest.delete(imageListRef(node))
    .catch((err: unknown) => {
      if (!isKubeError(err, 'NotFound')) throw err;
    });
}

/** Waits until the node's ImageList reports `image` in a state `ok` accepts. */
export function waitImageStatus(node: string, image: string, ok: (s: ImageStatus) => boolean, what: string, timeoutMs = WAIT.timeoutMs): Promise<ImageStatus> {
  return waitFor(
    async () => {
      const s = (await readList(node))?.status?.images?.find((i) => i.image === image);
      return s && ok(s) ? s : undefined;
    },
    { ...WAIT, timeoutMs, what: `${image} on ${node}: ${what}` },
  );
}

/** `ebb_daemon_pulls_total{result}` of the daemon serving on `port`. */
export async function daemonPulls(port: number, result = 'success'): Promise<number> {
  return metricValue((await httpGet(port, '/metrics')).body, 'ebb_daemon_pulls_total', { result });
}

export async function createPod(ns: string, name: string, spec: Record<string, unknown>): Promise<Stored<Pod>> {
  return sandbox().rest.create<Stored<Pod>>(core('pods', ns), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
}

export function isReady(p: Pod): boolean {
  return p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

export function waitPodReady(ns: string, name: string): Promise<Stored<Pod>> {
  return waitFor(
    async () => {
      const p = await sandbox().rest.get<Stored<Pod>>(core('pods', ns, name));
      return isReady(p) ? p : undefined;
    },
    { ...WAIT, intervalMs: 50, what: `pod ${ns}/${name} Ready` },
  );
}

export interface PodEvent {
  reason: string;
  message: string;
  involvedObject: { uid: string };
}

export async function podEvents(ns: string, uid: string): Promise<PodEvent[]> {
  const list = await sandbox().rest.list<PodEvent>(core('events', ns));
  return list.items.filter((e) => e.involvedObject.uid === uid);
}

/**
 * The events of a pod's start, once its `Pulled` and `Started` events are there (a `Pulling` event, if any, is
 * recorded before `Pulled`).
 */
export async function startEvents(ns: string, uid: string): Promise<PodEvent[]> {
  return waitFor(
    async () => {
      const events = await podEvents(ns, uid);
      return ['Pulled', 'Started'].every((r) => events.some((e) => e.reason === r)) ? events : undefined;
    },
    { ...WAIT, what: `Pulled and Started events of pod ${uid}` },
  );
}
