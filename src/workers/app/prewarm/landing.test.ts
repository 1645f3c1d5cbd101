import { describe, expect, it } from 'vitest';
import type { ImageList } from '../../../api/image-list.ts';
import { Label } from '../../../api/keys.ts';
import type { ClusterStored, Named, Pod } from '../../../kube/types.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import { held, NOW, world } from '../../../../test/unit/app/prewarm-world.ts';
import { podsOnWarmNodes } from './landing.ts';

const IMAGES = ['example.com/init:v2', 'example.com/web:v2'];

function pulledAt(node: string, at: string | undefined, images = IMAGES): ClusterStored<ImageList> {
  const list = held(node);
  return { ...list, status: { images: images.map((image) => ({ image, phase: 'Pulled' as const, ...(at ? { lastPullTime: at } : {}) })) } };
}

const pod = (name: string, node: string, created: string, revision = 'rev-2'): Named<Pod> => ({
  metadata: { name, namespace: 'ns', creationTimestamp: created, labels: { [Label.revision]: revision } },
  spec: { nodeName: node, containers: [] },
});

describe('podsOnWarmNodes', () => {
  const lists = [pulledAt('warm', '2025-01-01T00:01:00.600Z'), pulledAt('half', '2025-01-01T00:01:00Z', IMAGES.slice(0, 1)), pulledAt('untimed', undefined)];

  it.each<[string, Named<Pod>, number]>([
    ['created on a node after its pull finished', pod('a', 'warm', '2025-01-01T00:02:00Z'), 1],
    ['created before the pull finished (or updated in place since)', pod('a', 'warm', '2025-01-01T00:00:30Z'), 0],
    ['created in the second the pull finished (creation times have whole seconds)', pod('a', 'warm', '2025-01-01T00:01:00Z'), 1],
    ['another revision', pod('a', 'warm', '2025-01-01T00:02:00Z', 'rev-1'), 0],
    ['a node where one image is not pulled', pod('a', 'half', '2025-01-01T00:02:00Z'), 0],
    ['a pull with no time reported', pod('a', 'untimed', '2025-01-01T00:02:00Z'), 0],
    ['a node this App did not pre-warm', pod('a', 'cold', '2025-01-01T00:02:00Z'), 0],
  ])('%s', (_what, p, want) => {
    expect(podsOnWarmNodes([p], 'rev-2', IMAGES, lists)).toBe(want);
  });

  it('in the plan: status.prewarm counts the recreated pod that landed on a warm node, and omits zero', () => {
    const w = world({
      pods: [
        [0, 'old'],
        [1, 'old'],
        [2, 'old'],
        [3, 'new'],
      ],
      lists: [pulledAt('n3', '2024-12-31T00:00:00Z'), held('n2')],
    });
    const recreated = w.pods.find((p) => p.metadata.name === 'web-3');
    recreated!.metadata.creationTimestamp = '2025-01-01T00:00:00Z';
    expect(planned(w, NOW).status.prewarm?.podsOnWarmNodes).toBe(1);
    recreated!.metadata.creationTimestamp = '2024-12-30T00:00:00Z';
    expect(planned(w, NOW).status.prewarm).not.toHaveProperty('podsOnWarmNodes');
  });
});
