import { describe, expect, it } from 'vitest';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import { plan } from '../planner.ts';
import { needsInput } from '../model/plan.ts';
import { templateImages } from './targets.ts';
import { NOW, v, world, held, allOld, rolling, prewarm, prewarmWrites, type PodTuple, type World } from '../../../../test/unit/app/prewarm-world.ts';

describe('pre-warm in the plan', () => {
  it.each<[string, World, string[]]>([
    ['running rollout, lookahead 1: the node of the pod after the one updated now', { pods: allOld(4), lists: [] }, ['request n2']],
    ['running rollout, lookahead 2', { spec: prewarm({ lookahead: 2 }), pods: allOld(4), lists: [] }, ['request n2', 'request n1']],
    ['running rollout, lookahead 3 but parallelism 1', { spec: prewarm({ lookahead: 3, parallelism: 1 }), pods: allOld(4), lists: [] }, ['request n2']],
    [
      'parallelism 1, the requested node still pulling: nothing more',
      { spec: prewarm({ lookahead: 3, parallelism: 1 }), pods: allOld(4), lists: [held('n2')] },
      [],
    ],
    [
      'pods sharing a node: requested once',
      {
        spec: prewarm({ lookahead: 3 }),
        pods: [
          [0, 'old', 'x'],
          [1, 'old', 'x'],
          [2, 'old', 'y'],
          [3, 'old', 'y'],
        ],
        lists: [],
      },
      ['request y', 'request x'],
    ],
    [
      'an unscheduled next pod: nothing to request for it',
      {
        pods: [
          [0, 'old'],
          [1, 'old'],
          [2, 'old', ''],
          [3, 'old'],
        ],
        lists: [],
      },
      [],
    ],
    [
      'a pod already being updated in place is skipped',
      {
        spec: prewarm({ lookahead: 1 }),
        pods: [
          [0, 'old'],
          [1, 'old'],
          [2, 'old', undefined, { inPlace: true }],
          [3, 'new'],
        ],
        lists: [],
      },
      ['request n1'],
    ],
    [
      'rollingUpdate.paused: every remaining pod',
      { spec: rolling({ paused: true }), pods: allOld(4), lists: [] },
      ['request n3', 'request n2', 'request n1', 'request n0'],
    ],
    [
      'canary pause step: every remaining pod',
      {
        spec: rolling({ canary: { steps: [{ replicas: 1 }, { pause: {} }] } }),
        pods: [
          [0, 'old'],
          [1, 'old'],
          [2, 'old'],
          [3, 'new'],
        ],
        lists: [],
      },
      ['request n2', 'request n1', 'request n0'],
    ],
    [
      'canary replicas step: the rollout runs, lookahead from the spec partition',
      { spec: rolling({ canary: { steps: [{ replicas: 1 }, { pause: {} }] } }), pods: allOld(4), lists: [] },
      ['request n2'],
    ],
    [
      'OnDelete waits for a person: every outdated pod',
      { spec: { updateStrategy: { type: 'OnDelete' } }, pods: allOld(4), lists: [] },
      ['request n3', 'request n2', 'request n1', 'request n0'],
    ],
    [
      'paused with a partition: pods below it are not pre-warmed',
      { spec: rolling({ paused: true, partition: 2 }), pods: allOld(4), lists: [] },
      ['request n3', 'request n2'],
    ],
    [
      'partition reached: the rollout is over, entries cleared',
      {
        spec: rolling({ partition: 2 }),
        pods: [
          [0, 'old'],
          [1, 'old'],
          [2, 'new'],
          [3, 'new'],
        ],
        prewarmStatus: true,
        lists: [held('n3'), held('n2')],
      },
      ['remove n3', 'remove n2'],
    ],
    [
      'rollout complete: entries cleared',
      {
        pods: [
          [0, 'new'],
          [1, 'new'],
          [2, 'new'],
          [3, 'new'],
        ],
        prewarmStatus: true,
        lists: [held('n1'), held('n0')],
      },
      ['remove n1', 'remove n0'],
    ],
    [
      'pre-warm disabled mid-rollout: entries cleared',
      { spec: prewarm({ enabled: false }), pods: allOld(4), prewarmStatus: true, lists: [held('n2')] },
      ['remove n2'],
    ],
    ['App being deleted: entries cleared', { pods: allOld(4), prewarmStatus: true, deleting: true, lists: [held('n2')] }, ['remove n2']],
    [
      'a new template mid-rollout: the earlier image set is cleared',
      { pods: allOld(4), prewarmStatus: true, lists: [held('n0', 'deadbeef')] },
      ['request n2', 'remove n0'],
    ],
  ])('%s', (_what, w, writes) => {
    expect(prewarmWrites(world(w))).toEqual(writes);
  });

  it.each<[string, boolean, World]>([
    ['a rollout with pre-warm on', true, { pods: allOld(4) }],
    [
      'a steady App',
      false,
      {
        pods: [
          [0, 'new'],
          [1, 'new'],
          [2, 'new'],
          [3, 'new'],
        ],
      },
    ],
    [
      'a steady App with entries left to clear',
      true,
      {
        pods: [
          [0, 'new'],
          [1, 'new'],
          [2, 'new'],
          [3, 'new'],
        ],
        prewarmStatus: true,
      },
    ],
    ['a rollout with pre-warm off', false, { spec: prewarm({ enabled: false }), pods: allOld(4) }],
    [
      'pods held back by the partition only',
      false,
      {
        spec: rolling({ partition: 2 }),
        pods: [
          [0, 'old'],
          [1, 'old'],
          [2, 'new'],
          [3, 'new'],
        ],
      },
    ],
    ['an App being deleted without entries', false, { pods: allOld(4), deleting: true }],
    ['an App being deleted with entries', true, { pods: allOld(4), deleting: true, prewarmStatus: true }],
  ])('ImageLists read for %s: %s', (_what, needed, w) => {
    const p = plan(world({ ...w, lists: undefined }), NOW);
    expect(needsInput(p) ? p.needs : 'nothing').toBe(needed ? 'imageLists' : 'nothing');
  });

  it('status: counters and condition while pre-warming; both removed once entries are cleared', () => {
    const running = planned(world({ pods: allOld(4), lists: [] }), NOW).status;
    expect(running.prewarm).toEqual({ nodesRequested: 1, nodesPulled: 0, nodesFailed: 0, lookahead: 1 });
    expect(running.conditions).toContainEqual(expect.objectContaining({ type: 'ImagesPrewarmed', status: 'False', reason: 'ImagesPulling' }));
    const w = world({
      pods: [
        [0, 'new'],
        [1, 'new'],
        [2, 'new'],
        [3, 'new'],
      ],
      prewarmStatus: true,
      lists: [held('n0')],
    });
    w.app.status = { ...w.app.status, conditions: running.conditions ?? [] };
    const done = planned(w, NOW).status;
    expect(done.prewarm).toBeUndefined();
    expect(done.conditions?.some((c) => c.type === 'ImagesPrewarmed')).toBe(false);
  });

  it('pre-warm writes come after every pod write, and the status as read keeps status.prewarm', () => {
    const p = planned(world({ pods: allOld(4), prewarmStatus: true, lists: [] }), NOW);
    const kinds = p.actions.map((a) => a.kind);
    expect(kinds.indexOf('requestPrewarm')).toBeGreaterThan(kinds.indexOf('deletePod'));
    expect(p.statusAsRead?.().prewarm).toEqual({ nodesRequested: 1, nodesPulled: 0, nodesFailed: 0 });
  });

  it('no lookahead set: every remaining node until pulls and pace are measured, then ceil(pull × pace) + 1 pods', () => {
    const spec = { replicas: 8, imagePrewarm: { enabled: true } };
    const pods = (): PodTuple[] => [...allOld(6), [6, 'new'], [7, 'new']];
    // Nothing measured: pod 5 is updated now, the nodes of pods 4 to 0 are asked for.
    expect(prewarmWrites(world({ spec, pods: pods(), lists: [] }))).toEqual(['request n4', 'request n3', 'request n2', 'request n1', 'request n0']);
    expect(planned(world({ spec, pods: pods(), lists: [] }), NOW).status.prewarm?.lookahead).toBeUndefined();
    // Pods 7 and 6 became Ready 2 s apart (a pod per 2 s), a pull took 4 s: 4 × 0.5 + 1 = 3 pods ahead.
    const measured = world({
      spec,
      pods: pods(),
      lists: [
        {
          ...held('n9'),
          status: { images: ['init', 'web'].map((c) => ({ image: `example.com/${c}:v2`, phase: 'Pulled' as const, lastPullDurationMillis: 4_000 })) },
        },
      ],
    });
    for (const pod of measured.pods) {
      const ordinal = Number(pod.metadata.name.split('-').pop());
      if (ordinal >= 6)
        pod.status = { ...pod.status, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: `2025-05-31T23:59:5${ordinal === 6 ? 0 : 2}Z` }] };
    }
    expect(prewarmWrites(measured)).toEqual(['request n4', 'request n3', 'request n2']);
    expect(planned(measured, NOW).status.prewarm?.lookahead).toBe(3);
  });

  it('templateImages: containers and init containers, each once, sorted', () => {
    const t = v('v2');
    t.spec.containers.push({ name: 'side', image: 'example.com/init:v2' });
    expect(templateImages(t)).toEqual(['example.com/init:v2', 'example.com/web:v2']);
  });
});
