/**
 * People editing one App at once, as `kubectl edit` does: read the object, change one field, write it back
 * as a merge patch with the resourceVersion read as precondition; on 409 Conflict read again and retry (as
 * kubectl's conflict retry does). Each client owns its fields, so its last write must survive every other.
 * Plus the pod history checks of the storm: never two live pods for one ordinal, and pods created per
 * ordinal and revision.
 */
import type { App } from '../../../src/api/app.ts';
import { appRef } from '../../../src/api/group.ts';
import { Label } from '../../../src/api/keys.ts';
import { sleep } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';
import { getPodRevision } from '../../../src/workers/app/pods/predicates.ts';
import type { Seen } from './pod-history.ts';

/** One client: a name and its writes in order (each a merge patch of the App without metadata.resourceVersion). */
export interface StormClient {
  name: string;
  writes: Record<string, unknown>[];
}

export interface ClientResult {
  name: string;
  writes: number;
  conflicts: number;
}

/** Writes `client`'s patches one after another, `pause()` ms apart, each read-modify-write with a precondition. */
export async function runClient(rest: KubeRest, ns: string, app: string, client: StormClient, pause: () => number): Promise<ClientResult> {
  let conflicts = 0;
  for (const write of client.writes) {
    await sleep(pause());
    for (;;) {
      const live = await rest.get<App>(appRef(ns, app));
      // The person's think time between reading and saving, during which others write.
      await sleep(Math.floor(pause() / 4));
      const meta = (write['metadata'] ?? {}) as Record<string, unknown>;
      const body = { ...write, metadata: { ...meta, resourceVersion: live.metadata.resourceVersion } };
      try {
        await rest.patch(appRef(ns, app), body, PatchType.merge);
        break;
      } catch (err) {
        if (!isKubeError(err, 'Conflict')) throw err;
        conflicts++;
      }
    }
  }
  return { name: client.name, writes: client.writes.length, conflicts };
}

export const rollingUpdate = (fields: Record<string, unknown>): Record<string, unknown> => ({ spec: { updateStrategy: { rollingUpdate: fields } } });

/** What the pod watch saw: creations per ordinal (with the revision each was created at) and overlaps. */
export interface PodLedger {
  created: Map<number, string[]>;
  /** "two live pods for ordinal N" findings. */
  overlaps: string[];
  onSeen(s: Seen): void;
}

export function podLedger(): PodLedger {
  const live = new Map<number, Set<string>>();
  const seenUids = new Set<string>();
  const created = new Map<number, string[]>();
  const overlaps: string[] = [];
  return {
    created,
    overlaps,
    onSeen: (s) => {
      const ordinal = Number(s.pod.metadata.labels?.[Label.podIndex] ?? -1);
      const uid = s.pod.metadata.uid ?? '';
      const set = live.get(ordinal) ?? new Set<string>();
      live.set(ordinal, set);
      if (s.type === 'DELETED') {
        set.delete(uid);
        return;
      }
      if (!seenUids.has(uid) && s.type === 'ADDED') created.set(ordinal, [...(created.get(ordinal) ?? []), getPodRevision(s.pod) ?? '?']);
      seenUids.add(uid);
      set.add(uid);
      if (set.size > 1) overlaps.push(`ordinal ${ordinal}: live pods ${[...set].join(', ')}`);
    },
  };
}

/** Ordinals (below `stableBelow`, never scaled away) for which a pod was created twice at one revision. */
export function duplicateCreations(created: Map<number, string[]>, stableBelow: number): string[] {
  const dups: string[] = [];
  for (const [ordinal, revisions] of created) {
    if (ordinal >= stableBelow) continue;
    if (new Set(revisions).size !== revisions.length) dups.push(`ordinal ${ordinal}: ${revisions.join(', ')}`);
  }
  return dups;
}
