import { describe, expect, it } from 'vitest';
import type { ImageList, ImagePhase } from '../../../api/image-list.ts';
import type { ClusterStored } from '../../../kube/types.ts';
import { parseWorkerConfig } from '../../config.ts';
import { applyBody } from './apply.ts';
import { withPrewarmWait } from './grant.ts';
import { planPrewarm, prewarmIdentity, type PrewarmInput } from './plan.ts';
import { imagesKey, nodeState } from '../../shared/pull-state.ts';
import { cappedImages, pinsEndAt, unanswered, waitingSince } from './policy.ts';
import { DEFAULT_PREWARM_POLICY, type PrewarmPolicy } from '../model/prewarm-policy.ts';
import type { Plan } from '../model/plan.ts';

const id = prewarmIdentity('shop', 'web');
const IMAGES = ['example.com/init:2', 'example.com/web:2'];
const KEY = imagesKey(IMAGES);
const NOW = new Date('2025-06-01T12:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const POLICY: PrewarmPolicy = { maxImagesPerNode: 16, pinMaxMs: 24 * HOUR, answerTimeoutMs: 10 * MIN };

/** This App's ImageList on `node` for the current images, requested `ago` ms before NOW (no annotation: undefined). */
function list(node: string, phases: Partial<Record<string, ImagePhase>>, ago?: number, key = KEY): ClusterStored<ImageList> {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImageList',
    metadata: {
      name: node,
      uid: `uid-${node}`,
      resourceVersion: '1',
      labels: { [id.labelKey]: key },
      ...(ago !== undefined ? { annotations: { [id.labelKey]: iso(NOW.getTime() - ago) } } : {}),
    },
    spec: { images: IMAGES.map((image) => ({ image })) },
    status: {
      images: Object.entries(phases).map(([image, phase]) => ({
        image,
        phase: phase ?? 'Pending',
        ...(phase === 'Deferred' ? { message: 'image filesystem /var/lib/containerd is 83% used' } : {}),
        ...(phase === 'Failed' ? { message: 'manifest unknown' } : {}),
      })),
    },
  };
}

const input = (over: Partial<PrewarmInput>): PrewarmInput => ({
  id,
  active: true,
  images: IMAGES,
  revision: 'web-2',
  targets: [],
  parallelism: 1,
  lists: [],
  now: NOW,
  policy: POLICY,
  ...over,
});
const deferred = { 'example.com/init:2': 'Deferred', 'example.com/web:2': 'Pulled' } as const;
const requests = (o: ReturnType<typeof planPrewarm>): string[] => o.actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [a.node] : []));
const removals = (o: ReturnType<typeof planPrewarm>): string[] => o.actions.flatMap((a) => (a.kind === 'removePrewarm' ? [a.node] : []));

describe('policy helpers', () => {
  it('cappedImages keeps the first in sorted order and counts the rest', () => {
    expect(cappedImages(['c', 'a', 'b'], 2)).toEqual({ images: ['a', 'b'], left: 1 });
    expect(cappedImages(['b', 'a'], 16)).toEqual({ images: ['a', 'b'], left: 0 });
  });

  it('waitingSince is the Paused condition True since its last transition', () => {
    const at = '2025-06-01T10:00:00Z';
    const paused = (status: 'True' | 'False') => ({ conditions: [{ type: 'Paused', status, reason: 'CanaryPause', message: '', lastTransitionTime: at }] });
    expect(waitingSince(paused('True'))).toBe(Date.parse(at));
    expect(waitingSince(paused('False'))).toBeUndefined();
    expect(waitingSince({})).toBeUndefined();
    expect(waitingSince(undefined)).toBeUndefined();
  });

  it('pinsEndAt: the wait start plus the limit; never without a wait or with the limit 0', () => {
    expect(pinsEndAt(1_000, POLICY)).toBe(1_000 + 24 * HOUR);
    expect(pinsEndAt(undefined, POLICY)).toBeUndefined();
    expect(pinsEndAt(1_000, { ...POLICY, pinMaxMs: 0 })).toBeUndefined();
  });

  it.each<[string, ClusterStored<ImageList>, PrewarmPolicy, boolean]>([
    ['no status past the timeout', list('a', {}, 11 * MIN), POLICY, true],
    ['no status, timeout not reached', list('a', {}, 9 * MIN), POLICY, false],
    ['one image reported', list('a', { 'example.com/web:2': 'Pending' }, 11 * MIN), POLICY, false],
    ['no request time written (cannot be told)', list('a', {}), POLICY, false],
    ['timeout 0: never', list('a', {}, 11 * MIN), { ...POLICY, answerTimeoutMs: 0 }, false],
  ])('unanswered: %s', (_name, l, policy, expected) => {
    expect(unanswered(l, IMAGES, id.labelKey, NOW.getTime(), policy)).toBe(expected);
  });

  it('the worker settings give the defaults, and each can be set', () => {
    const base = { EBB_REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(parseWorkerConfig(base).prewarmPolicy).toEqual(DEFAULT_PREWARM_POLICY);
    expect(
      parseWorkerConfig({ ...base, EBB_PREWARM_MAX_IMAGES_PER_NODE: '4', EBB_PREWARM_PIN_MAX: '2h', EBB_PREWARM_ANSWER_TIMEOUT: '0' }).prewarmPolicy,
    ).toEqual({ maxImagesPerNode: 4, pinMaxMs: 2 * HOUR, answerTimeoutMs: 0 });
  });
});

describe('nodeState with Deferred', () => {
  it('a node whose daemon defers a pull for disk is deferred, not pulling; a failure weighs more', () => {
    expect(nodeState(list('a', deferred), IMAGES)).toEqual({ state: 'deferred', message: 'image filesystem /var/lib/containerd is 83% used' });
    expect(nodeState(list('a', { ...deferred, 'example.com/web:2': 'Failed' }), IMAGES)).toMatchObject({ state: 'failed' });
    expect(nodeState(list('a', { ...deferred, 'example.com/web:2': 'Pulling' }), IMAGES)).toEqual({ state: 'pulling' });
  });
});

describe('planPrewarm with the limits', () => {
  it('a node deferred for disk gives its slot and its budget share back; the condition says where and why', () => {
    const o = planPrewarm(input({ targets: ['a', 'b'], lists: [list('a', deferred, MIN)] }));
    expect(requests(o)).toEqual(['b']);
    expect(o.budget).toMatchObject({ pulling: [], done: ['a'] });
    expect(o.condition?.message).toBe(
      '0 of 2 requested nodes pulled the images of revision web-2; pulling on b; deferred for disk on a (image filesystem /var/lib/containerd is 83% used)',
    );
    const settled = planPrewarm(input({ targets: ['a'], lists: [list('a', deferred, MIN)] }));
    expect(settled.condition).toMatchObject({ status: 'False', reason: 'ImagePullDeferred' });
  });

  it('a node whose daemon never answered gives its slot back after the timeout, keeping its entries', () => {
    const silent = planPrewarm(input({ targets: ['a', 'b'], lists: [list('a', {}, 11 * MIN)] }));
    expect(requests(silent)).toEqual(['b']);
    expect(removals(silent)).toEqual([]);
    expect(silent.budget).toMatchObject({ pulling: [], done: ['a'] });
    expect(silent.condition?.message).toContain('no answer from the node daemon on a (its pull slot is given back)');
    const alone = planPrewarm(input({ targets: ['a'], lists: [list('a', {}, 11 * MIN)] }));
    expect(alone.condition).toMatchObject({ status: 'False', reason: 'PrewarmUnanswered' });
    // Before the timeout it holds its slot; once its daemon answers it is pulling again.
    expect(requests(planPrewarm(input({ targets: ['a', 'b'], lists: [list('a', {}, 9 * MIN)] })))).toEqual([]);
    const answered = planPrewarm(input({ targets: ['a', 'b'], lists: [list('a', { 'example.com/web:2': 'Pulling' }, 11 * MIN)] }));
    expect(requests(answered)).toEqual([]);
    expect(answered.budget?.pulling).toEqual(['a']);
  });

  it('is planned again when a silent node becomes overdue: the first of the nodes not answered yet, or a node requested now', () => {
    const lists = [list('a', {}, 4 * MIN), list('b', {}, 2 * MIN), list('c', { 'example.com/web:2': 'Pulling' }, 9 * MIN)];
    expect(planPrewarm(input({ targets: ['a', 'b', 'c'], parallelism: 3, lists })).wakeAt).toBe(NOW.getTime() + 6 * MIN);
    expect(planPrewarm(input({ targets: ['d'], parallelism: 1 })).wakeAt).toBe(NOW.getTime() + 10 * MIN);
    // The earlier of both clocks.
    expect(planPrewarm(input({ targets: ['d'], waitingSince: NOW.getTime() - 24 * HOUR + MIN })).wakeAt).toBe(NOW.getTime() + MIN);
  });

  it('writes the request time with the request, under the label key, as an annotation', () => {
    const [request] = planPrewarm(input({ targets: ['a'] })).actions;
    expect(request).toMatchObject({ kind: 'requestPrewarm', requestedAt: '2025-06-01T12:00:00Z' });
    expect(applyBody(request!)).toMatchObject({ metadata: { annotations: { [id.labelKey]: '2025-06-01T12:00:00Z' }, labels: { [id.labelKey]: KEY } } });
    // Without a clock nothing is written.
    expect(planPrewarm(input({ targets: ['a'], now: undefined })).actions[0]).not.toHaveProperty('requestedAt');
  });

  it('a rollout paused past the pin limit removes every entry, requests nothing, and says so until it goes on', () => {
    const since = NOW.getTime() - 25 * HOUR;
    const o = planPrewarm(input({ targets: ['a', 'c'], lists: [list('a', {}, 25 * HOUR), list('b', deferred, HOUR)], waitingSince: since }));
    expect(requests(o)).toEqual([]);
    expect(removals(o)).toEqual(['a', 'b']);
    expect(o.status).toBeUndefined();
    expect(o.budget).toMatchObject({ pulling: [], done: ['a', 'b'] });
    expect(o.condition).toEqual({
      type: 'ImagesPrewarmed',
      status: 'False',
      reason: 'PrewarmUnpinned',
      message:
        'the rollout has waited since 2025-05-31T11:00:00Z, longer than 24h (EBB_PREWARM_PIN_MAX): the images of revision web-2 are no longer kept on the nodes, so image garbage collection may reclaim them; pre-warming resumes when the rollout goes on',
    });
  });

  it('a rollout paused for less than the limit pre-warms, and asks to be planned again when its pins end', () => {
    const since = NOW.getTime() - 23 * HOUR;
    const quiet = { ...POLICY, answerTimeoutMs: 0 };
    const o = planPrewarm(input({ targets: ['a'], waitingSince: since, policy: quiet }));
    expect(requests(o)).toEqual(['a']);
    expect(o.wakeAt).toBe(since + 24 * HOUR);
    expect(planPrewarm(input({ targets: ['a'], waitingSince: since, policy: { ...quiet, pinMaxMs: 0 } })).wakeAt).toBeUndefined();
    expect(planPrewarm(input({ targets: ['a'], policy: quiet })).wakeAt).toBeUndefined();
  });

  it('caps the images per node: the first in sorted order, keyed as such, the rest named in the condition', () => {
    const images = ['example.com/c:2', 'example.com/a:2', 'example.com/b:2'];
    const policy = { ...POLICY, maxImagesPerNode: 2 };
    const o = planPrewarm(input({ images, targets: ['a'], policy }));
    expect(o.actions[0]).toMatchObject({ images: ['example.com/a:2', 'example.com/b:2'], label: { value: imagesKey(['example.com/a:2', 'example.com/b:2']) } });
    expect(o.condition?.message).toMatch(/; 1 of the revision's 3 images not pre-warmed \(at most 2 per node, EBB_PREWARM_MAX_IMAGES_PER_NODE\)$/);
    // A node holding the capped set holds the current one: not requested again.
    const held: ClusterStored<ImageList> = {
      ...list('a', { 'example.com/a:2': 'Pulled', 'example.com/b:2': 'Pulled' }, MIN, imagesKey(['example.com/a:2', 'example.com/b:2'])),
      spec: { images: [{ image: 'example.com/a:2' }, { image: 'example.com/b:2' }] },
    };
    const again = planPrewarm(input({ images, targets: ['a'], policy, lists: [held] }));
    expect(again.actions).toEqual([]);
    expect(again.condition).toMatchObject({ status: 'True', reason: 'ImagesPulled' });
  });
});

describe('withPrewarmWait', () => {
  const plan = (wakeAt: number | undefined, wait?: Plan['wait']): Plan => ({
    actions: [],
    status: {},
    ...(wait ? { wait } : {}),
    prewarm: { actions: [], status: undefined, condition: undefined, wakeAt },
  });

  it('comes back when a pre-warm clock runs out, unless something brings the App back sooner', () => {
    expect(withPrewarmWait(plan(NOW.getTime() + HOUR), NOW).wait).toEqual({ reason: 'prewarm-timer', afterMs: HOUR });
    expect(withPrewarmWait(plan(NOW.getTime() + HOUR, { reason: 'x', afterMs: 5_000 }), NOW).wait).toEqual({ reason: 'x', afterMs: 5_000 });
    expect(withPrewarmWait(plan(undefined), NOW).wait).toBeUndefined();
  });
});
