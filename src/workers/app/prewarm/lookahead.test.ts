import { describe, expect, it } from 'vitest';
import type { ImageList, ImageStatus } from '../../../api/image-list.ts';
import { Label } from '../../../api/keys.ts';
import type { Pod } from '../../../kube/types.ts';
import { adaptiveLookahead, expectedPullMs, rolloutPace } from './lookahead.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const at = (secondsBefore: number): string => new Date(NOW.getTime() - secondsBefore * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const IMAGES = ['example.com/web:2', 'example.com/init:2'];

const list = (...images: Partial<ImageStatus>[]): Pick<ImageList, 'status'> => ({
  status: { images: images.map((s) => ({ image: 'example.com/web:2', phase: 'Pending' as const, ...s })) },
});

describe('expectedPullMs', () => {
  it.each<[string, Pick<ImageList, 'status'>[], number | undefined]>([
    ['nothing reported: unknown', [], undefined],
    ['only pulls still running: unknown', [list({ phase: 'Pulling', pullStartTime: at(30) })], undefined],
    ['one finished pull: its duration', [list({ phase: 'Pulled', lastPullDurationMillis: 20_400 })], 20_400],
    [
      'the longest finished pull of any node or image',
      [
        list({ phase: 'Pulled', lastPullDurationMillis: 5_000 }, { image: 'example.com/init:2', phase: 'Pulled', lastPullDurationMillis: 9_000 }),
        list({ phase: 'Pulled', lastPullDurationMillis: 7_000 }),
      ],
      9_000,
    ],
    [
      'a running pull that already took longer counts with its time so far',
      [list({ phase: 'Pulled', lastPullDurationMillis: 5_000 }), list({ phase: 'Pulling', pullStartTime: at(12) })],
      12_000,
    ],
    [
      'images of another set are not counted',
      [list({ phase: 'Pulled', lastPullDurationMillis: 5_000 }, { image: 'example.com/web:1', phase: 'Pulled', lastPullDurationMillis: 60_000 })],
      5_000,
    ],
    ['an image present without a pull (no duration): unknown', [list({ phase: 'Pulled' })], undefined],
  ])('%s', (_name, lists, want) => {
    expect(expectedPullMs(lists, IMAGES, NOW)).toBe(want);
  });
});

/** A pod at `revision`, Ready since `secondsBefore` (or not Ready when undefined). */
const pod = (revision: string, secondsBefore: number | undefined): Pod => ({
  metadata: { name: 'p', labels: { [Label.revision]: revision } },
  spec: { containers: [] },
  status: {
    conditions: secondsBefore === undefined ? [{ type: 'Ready', status: 'False' }] : [{ type: 'Ready', status: 'True', lastTransitionTime: at(secondsBefore) }],
  },
});
const updated = (...secondsBefore: (number | undefined)[]): Pod[] => secondsBefore.map((s) => pod('web-2', s));

describe('rolloutPace', () => {
  it.each<[string, Pod[], number | undefined]>([
    ['no updated pod: unknown', [pod('web-1', 10), pod('web-1', 20)], undefined],
    ['one updated pod: unknown', updated(10), undefined],
    ['updated pods not Ready do not count', updated(10, undefined), undefined],
    ['two pods 4 s apart: a pod per 4 s', updated(14, 10), 0.25],
    ['steady 2 s steps', updated(10, 8, 6, 4, 2), 0.5],
    ['a pause (the longest gap) is left out', updated(130, 128, 126, 6, 4, 2), 0.5],
    ['only the latest PACE_WINDOW transitions count', [...updated(1000, 900, 800), ...updated(10, 8, 6, 4, 2, 0)], 0.5],
    ['a batch Ready in the same second: spans never shorter than a second', updated(5, 5, 5), 1],
    ['pods of the current revision are not counted', [...updated(10, 8), pod('web-1', 9), pod('web-1', 0)], 0.5],
  ])('%s', (_name, pods, want) => {
    expect(rolloutPace(pods, 'web-2')).toBe(want);
  });
});

describe('adaptiveLookahead', () => {
  it.each<[string, number | undefined, number | undefined, number | undefined]>([
    ['nothing measured: every remaining pod', undefined, undefined, undefined],
    ['pull time unknown: every remaining pod', undefined, 0.5, undefined],
    ['pace unknown: every remaining pod', 20_000, undefined, undefined],
    ['20 s pulls, a pod per 2 s: ten pods plus one', 20_000, 0.5, 11],
    ['5 s pulls, a pod per 2 s: three pods plus one', 5_000, 0.5, 4],
    ['pulls shorter than a step: the next pod plus one', 1_000, 0.1, 2],
    ['instant pulls: one pod', 0, 0.5, 1],
  ])('%s', (_name, pullMs, pace, want) => {
    expect(adaptiveLookahead(pullMs, pace)).toBe(want);
  });
});
