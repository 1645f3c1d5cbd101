/**
 * Every version of an App's pods as the apiserver publishes them (a list+watch from the test, full objects),
 * with the time each was seen: enough to assert what a poll could miss — the readiness gate going False then
 * True, the state annotation, the order pods were updated in, the time between two writes.
 */
import { Annotation, Label } from '../../../src/api/keys.ts';
import { AbortedError } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { listWatch } from '../../../src/kube/watch.ts';
import type { ContainerStatus, Pod, PodCondition } from '../../../src/kube/types.ts';
import { IN_PLACE_GATE } from '../../../src/workers/inplace/index.ts';
import { sandbox } from '../support.ts';

export interface Seen {
  at: number;
  type: 'LIST' | 'ADDED' | 'MODIFIED' | 'DELETED';
  pod: Pod;
}

export interface PodHistory {
  seen: Seen[];
  /** The versions of pod `name`, in order. */
  of(name: string): Seen[];
  stop(): Promise<void>;
}

export const gateOf = (pod: Pod): PodCondition | undefined => pod.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
export const isAnnotated = (pod: Pod): boolean => pod.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined;
export const imagesOf = (pod: Pod): string[] => pod.spec.containers.map((c) => c.image);
export const statusesOf = (pod: Pod): ContainerStatus[] => pod.status?.containerStatuses ?? [];

/** Records the pods of App `app` in `ns` until stopped; resolves once the initial list is in. */
export async function recordPods(ns: string, app: string, onSeen?: (s: Seen) => void): Promise<PodHistory> {
  const ac = new AbortController();
  const seen: Seen[] = [];
  const push = (s: Seen) => {
    seen.push(s);
    onSeen?.(s);
  };
  let listed: () => void = () => undefined;
  const ready = new Promise<void>((r) => (listed = r));
  const loop = listWatch<Pod>(
    { rest: sandbox().rest, ref: core('pods', ns), labelSelector: `${Label.app}=${app}`, signal: ac.signal },
    {
      onList: (items) => {
        for (const pod of items) push({ at: Date.now(), type: 'LIST', pod });
        listed();
      },
      onEvent: (e) => push({ at: Date.now(), type: e.type, pod: e.object }),
    },
  ).catch((err: unknown) => {
    if (!(err instanceof AbortedError)) throw err;
  });
  await ready;
  return {
    seen,
    of: (name) => seen.filter((s) => s.pod.metadata.name === name),
    stop: async () => {
      ac.abort();
      await loop;
    },
  };
}
