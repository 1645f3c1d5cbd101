import { describe, expect, it } from 'vitest';
import type { ImageList, ImagePhase } from '../../../api/image-list.ts';
import type { ClusterStored } from '../../../kube/types.ts';
import { planPrewarm, prewarmCondition, prewarmIdentity, withinBudget, type PrewarmInput } from './plan.ts';
import type { PrewarmAction } from '../model/prewarm-outcome.ts';
import { imagesKey, nodeState, type NodeState } from '../../shared/pull-state.ts';

const id = prewarmIdentity('shop', 'web');
const IMAGES = ['example.com/init:2', 'example.com/web:2'];
const KEY = imagesKey(IMAGES);
const OLD_KEY = imagesKey(['example.com/init:1', 'example.com/web:1']);

type Phases = Partial<Record<string, ImagePhase>>;

/** An ImageList holding this App's entries: for the current images (`key` KEY), or an earlier set. */
function list(node: string, phases: Phases = {}, opts: { key?: string; images?: string[] } = {}): ClusterStored<ImageList> {
  const key = opts.key ?? KEY;
  const images = opts.images ?? (key === KEY ? IMAGES : ['example.com/init:1', 'example.com/web:1']);
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImageList',
    metadata: { name: node, uid: `uid-${node}`, resourceVersion: '1', labels: { [id.labelKey]: key } },
    spec: { images: images.map((image) => ({ image })) },
    status: {
      images: Object.entries(phases).map(([image, phase]) => ({
        image,
        phase: phase ?? 'Pending',
        ...(phase === 'Failed' ? { message: 'manifest unknown' } : {}),
      })),
    },
  };
}

const pulled: Phases = { 'example.com/init:2': 'Pulled', 'example.com/web:2': 'Pulled' };
const failed: Phases = { 'example.com/init:2': 'Pulled', 'example.com/web:2': 'Failed' };
const half: Phases = { 'example.com/init:2': 'Pulled', 'example.com/web:2': 'Pulling' };

const input = (over: Partial<PrewarmInput>): PrewarmInput => ({
  id,
  active: true,
  images: IMAGES,
  revision: 'web-2',
  targets: [],
  parallelism: 1,
  lists: [],
  ...over,
});

const summary = (actions: PrewarmAction[]): string[] => actions.map((a) => `${a.kind === 'requestPrewarm' ? 'request' : 'remove'} ${a.node}`);

describe('planPrewarm', () => {
  it.each<[string, Partial<PrewarmInput>, string[], [number, number, number] | undefined]>([
    ['nothing requested yet, parallelism 1: the first target', { targets: ['a', 'b'] }, ['request a'], [1, 0, 0]],
    ['parallelism 2: the first two targets', { targets: ['a', 'b', 'c'], parallelism: 2 }, ['request a', 'request b'], [2, 0, 0]],
    ['parallelism above the targets: every target', { targets: ['a', 'b'], parallelism: 5 }, ['request a', 'request b'], [2, 0, 0]],
    ['a node still pulling holds the only slot', { targets: ['b', 'c'], lists: [list('a')] }, [], [1, 0, 0]],
    ['a node with one image of two pulled is still pulling', { targets: ['b'], lists: [list('a', half)] }, [], [1, 0, 0]],
    ['a node pulled frees its slot: the next target', { targets: ['b', 'c'], lists: [list('a', pulled)] }, ['request b'], [2, 1, 0]],
    ['a failed pull frees its slot too', { targets: ['b', 'c'], lists: [list('a', failed)] }, ['request b'], [2, 0, 1]],
    [
      'parallelism 2 with one pulling, one pulled: one slot',
      { targets: ['c', 'd'], parallelism: 2, lists: [list('a'), list('b', pulled)] },
      ['request c'],
      [3, 1, 0],
    ],
    ['a target already requested is not requested again', { targets: ['a', 'b'], parallelism: 2, lists: [list('a')] }, ['request b'], [2, 0, 0]],
    [
      'an earlier image set on a target: requested again (the apply replaces it)',
      { targets: ['a'], lists: [list('a', {}, { key: OLD_KEY })] },
      ['request a'],
      [1, 0, 0],
    ],
    ['an earlier image set elsewhere: cleared', { targets: ['a'], lists: [list('z', {}, { key: OLD_KEY })] }, ['request a', 'remove z'], [1, 0, 0]],
    [
      'an earlier image set on a target without a slot: cleared for now',
      { targets: ['b', 'a'], lists: [list('a', {}, { key: OLD_KEY })] },
      ['request b', 'remove a'],
      [1, 0, 0],
    ],
    [
      'our label but an entry gone (edited away): requested again',
      { targets: ['a'], lists: [list('a', pulled, { images: ['example.com/web:2'] })] },
      ['request a'],
      [1, 0, 0],
    ],
    ['no target (pods not scheduled): nothing, counted as zero', { targets: [] }, [], [0, 0, 0]],
    [
      'no longer active (rollout over, disabled, App deleted): everything cleared',
      { active: false, targets: ['a'], lists: [list('a', pulled), list('b')] },
      ['remove a', 'remove b'],
      undefined,
    ],
    ['no longer active and nothing held: nothing', { active: false, lists: [] }, [], undefined],
  ])('%s', (_what, over, actions, counts) => {
    const out = planPrewarm(input(over));
    expect(summary(out.actions)).toEqual(actions);
    expect(out.status).toEqual(counts && { nodesRequested: counts[0], nodesPulled: counts[1], nodesFailed: counts[2] });
    expect(out.condition === undefined).toBe(counts === undefined);
  });

  it('requests with the App field manager, its label (valued by the image set) and the images sorted', () => {
    const [action] = planPrewarm(input({ images: ['z.io/b:1', 'a.io/a:1'], targets: ['a'] })).actions;
    expect(action).toEqual({
      kind: 'requestPrewarm',
      node: 'a',
      fieldManager: 'ebb-prewarm/shop/web',
      label: { key: 'prewarm.apps.ebb.dev/shop.web', value: imagesKey(['a.io/a:1', 'z.io/b:1']) },
      images: ['a.io/a:1', 'z.io/b:1'],
    });
    expect(imagesKey(['z.io/b:1', 'a.io/a:1'])).toBe(imagesKey(['a.io/a:1', 'z.io/b:1']));
    expect(imagesKey(['a.io/a:1'])).toMatch(/^[0-9a-f]{8}$/);
  });

  it('names the pull secret on the request; another pull secret requests the nodes again', () => {
    const regcred = { namespace: 'shop', name: 'regcred' };
    const [action] = planPrewarm(input({ targets: ['a'], pullSecret: regcred })).actions;
    expect(action).toMatchObject({ kind: 'requestPrewarm', node: 'a', pullSecret: regcred });
    // A node that holds the images under the key without a pull secret is requested again.
    const again = planPrewarm(input({ targets: ['a'], pullSecret: regcred, lists: [list('a', pulled)] })).actions;
    expect(again.map((a) => a.kind)).toEqual(['requestPrewarm']);
    expect(planPrewarm(input({ targets: ['a'], lists: [list('a', pulled)] })).actions).toEqual([]);
  });

  it('clears with the uid as precondition', () => {
    expect(planPrewarm(input({ active: false, lists: [list('a')] })).actions).toEqual([
      { kind: 'removePrewarm', node: 'a', uid: 'uid-a', fieldManager: id.fieldManager },
    ]);
  });
});

describe('without parallelism: the pull budget bounds the requests', () => {
  it('every target not requested yet is asked for, and the budget use names pulls running and done', () => {
    const lists = [list('a'), list('b', pulled), list('c', {}, { key: OLD_KEY })];
    const out = planPrewarm(input({ parallelism: undefined, targets: ['a', 'b', 'd', 'e'], lists }));
    expect(summary(out.actions)).toEqual(['request d', 'request e', 'remove c']);
    expect(out.budget).toMatchObject({ pulling: ['a'], done: ['b', 'c'] });
    expect(out.status).toEqual({ nodesRequested: 4, nodesPulled: 1, nodesFailed: 0 });
  });

  it('withinBudget keeps the granted requests (and every removal) and reports the rest as waiting', () => {
    const out = planPrewarm(input({ parallelism: undefined, targets: ['d', 'e', 'f'], lists: [list('a', pulled), list('c', {}, { key: OLD_KEY })] }));
    const within = withinBudget(out, new Set(['d']));
    expect(summary(within.actions)).toEqual(['request d', 'remove c']);
    expect(within.status).toEqual({ nodesRequested: 2, nodesPulled: 1, nodesFailed: 0 });
    expect(within.condition).toMatchObject({ status: 'False', reason: 'ImagesPulling' });
    expect(within.condition?.message).toMatch(/pulling on d; 2 more nodes wait for room in the cluster's pre-warm pull budget$/);
    expect(withinBudget(out, new Set(['d', 'e', 'f']))).toBe(out);
  });

  it.each([
    [undefined, "2 more nodes wait for room in the cluster's pre-warm pull budget"],
    ['budget', "2 more nodes wait for room in the cluster's pre-warm pull budget"],
    ['namespacePulls', "2 more nodes wait for room in the namespace's share of the cluster's pre-warm pull budget (EBB_PREWARM_NAMESPACE_PULLS)"],
    [
      'namespaceEntries',
      "2 more nodes wait for room in the namespace's ImageList entries: its Apps and ImagePullJobs hold as many as it may (EBB_PREWARM_NAMESPACE_ENTRIES); they are not requested",
    ],
  ] as const)('withinBudget limited by %s: the condition says which limit the nodes wait for', (limitedBy, said) => {
    const out = planPrewarm(input({ parallelism: undefined, targets: ['d', 'e', 'f'], lists: [list('a', pulled)] }));
    expect(out.budget?.images, 'entries per node: the images').toBe(2);
    const within = withinBudget(out, new Set(['d']), limitedBy);
    expect(summary(within.actions)).toEqual(['request d']);
    expect(within.condition?.message.endsWith(said)).toBe(true);
  });

  it('nothing granted and nothing requested before: pending, waiting for the budget', () => {
    const within = withinBudget(planPrewarm(input({ parallelism: undefined, targets: ['d'] })), new Set());
    expect(within.actions).toEqual([]);
    expect(within.condition).toMatchObject({ status: 'False', reason: 'PrewarmPending' });
    expect(within.condition?.message).toMatch(/no node requested yet for revision web-2; 1 more node waits/);
  });

  it('clearing everything gives every node back', () => {
    expect(planPrewarm(input({ active: false, lists: [list('a'), list('b', pulled)] })).budget).toMatchObject({ pulling: [], done: ['a', 'b'] });
  });
});

describe('nodeState', () => {
  it.each<[string, Phases, NodeState]>([
    ['no status yet', {}, { state: 'pulling' }],
    ['Pending and Pulling', { 'example.com/init:2': 'Pending', 'example.com/web:2': 'Pulling' }, { state: 'pulling' }],
    ['every image Pulled', pulled, { state: 'pulled' }],
    ['one Failed, the other Pulled', failed, { state: 'failed', message: 'example.com/web:2: manifest unknown' }],
    ['one Failed, the other still Pulling', { 'example.com/init:2': 'Pulling', 'example.com/web:2': 'Failed' }, { state: 'pulling' }],
  ])('%s', (_what, phases, state) => {
    expect(nodeState(list('a', phases), IMAGES)).toEqual(state);
  });
});

describe('prewarmCondition', () => {
  const states = (...s: [string, NodeState][]): Map<string, NodeState> => new Map(s);
  it.each<[string, Map<string, NodeState>, string, string, RegExp]>([
    ['nothing requested', states(), 'False', 'PrewarmPending', /not scheduled/],
    [
      'every node pulled',
      states(['a', { state: 'pulled' }], ['b', { state: 'pulled' }]),
      'True',
      'ImagesPulled',
      /^2 of 2 requested nodes pulled the images of revision web-2$/,
    ],
    ['some pulling', states(['a', { state: 'pulled' }], ['b', { state: 'pulling' }]), 'False', 'ImagesPulling', /1 of 2 .*; pulling on b$/],
    [
      'a failure, nothing pulling',
      states(['a', { state: 'failed', message: 'x: denied' }], ['b', { state: 'pulled' }]),
      'False',
      'ImagePullFailed',
      /failed on a \(x: denied\)$/,
    ],
    [
      'many pulling: the first three named',
      states(...['a', 'b', 'c', 'd', 'e'].map((n): [string, NodeState] => [n, { state: 'pulling' }])),
      'False',
      'ImagesPulling',
      /pulling on a, b, c and 2 more$/,
    ],
  ])('%s', (_what, s, status, reason, message) => {
    const c = prewarmCondition(s, 'web-2');
    expect(c).toMatchObject({ type: 'ImagesPrewarmed', status, reason });
    expect(c.message).toMatch(message);
  });
});
