/** Helpers the pre-warm integration tests share. */
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { imageListRef } from '../../../src/api/group.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { prewarmLabelKey } from '../../../src/api/prewarm-keys.ts';
import { sandbox } from '../support.ts';
import { image } from './harness.ts';

/** Pods spread one per node (a recreated pod goes back to the node it left), with an optional init container. */
export function spreadTemplate(name: string, tag: string, init?: string): AppSpec['template'] {
  return {
    metadata: { labels: { app: name } },
    spec: {
      containers: [{ name: 'main', image: image(tag) }],
      ...(init ? { initContainers: [{ name: 'init', image: init }] } : {}),
      terminationGracePeriodSeconds: 1,
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } },
      ],
    },
  };
}

/** Node → images of the ImageLists that carry the pre-warm label of App `ns/name`. */
export async function prewarmHeldBy(ns: string, name: string): Promise<Record<string, string[]>> {
  const lists = (await sandbox().rest.list<ImageList>(imageListRef(), { labelSelector: prewarmLabelKey(ns, name) })).items;
  return Object.fromEntries(lists.map((l) => [l.metadata.name ?? '', (l.spec?.images ?? []).map((e) => e.image).sort()]));
}
