import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { ImageList } from '../../../api/image-list.ts';
import { Annotation } from '../../../api/keys.ts';
import { makeApp, podFor, stored } from '../../../../test/unit/app/fixtures.ts';
import type { ClusterStored, ControllerRevision, Stored } from '../../../kube/types.ts';
import { needsInput, plan, type Observed } from '../planner.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import { imagesKey, prewarmIdentity } from './plan.ts';
import { templateImages } from './targets.ts';
import { newRevision, revisionData } from '../revisions/revisions.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const v = (tag: string): AppSpec['template'] => ({
  metadata: { labels: { app: 'web' } },
  spec: { initContainers: [{ name: 'init', image: `example.com/init:${tag}` }], containers: [{ name: 'main', image: `example.com/web:${tag}` }] },
});
const id = prewarmIdentity('ns', 'web');
const KEY = imagesKey(['example.com/init:v2', 'example.com/web:v2']);

function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  return stored<ControllerRevision>(newRevision(makeApp('web', spec), revisionData(makeApp('web', spec)), n, 0), `rev-${n}`);
}

type PodTuple = [ordinal: number, revision: 'old' | 'new', node?: string, opts?: { inPlace?: boolean }];

interface World {
  spec?: Partial<AppSpec>;
  pods: PodTuple[];
  /** ImageLists holding the App's entries; undefined = not read. */
  lists?: ClusterStored<ImageList>[] | undefined;
  prewarmStatus?: boolean;
  deleting?: boolean;
  canary?: { step: number; pausedAt?: string };
}

/** An App at template v2 with pre-warm on; pods on node n<ordinal> unless said otherwise. */
function world(w: World): Observed {
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
function held(node: string, key = KEY): ClusterStored<ImageList> {
  const images = key === KEY ? ['example.com/init:v2', 'example.com/web:v2'] : ['example.com/web:v0'];
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'ImageList',
    metadata: { name: node, uid: `uid-${node}`, resourceVersion: '1', labels: { [id.labelKey]: key } },
    spec: { images: images.map((image) => ({ image })) },
  };
}

const allOld = (n: number): PodTuple[] => Array.from({ length: n }, (_, i): PodTuple => [i, 'old']);
const rolling = (ru: object): Partial<AppSpec> => ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } });
const prewarm = (p: { parallelism?: number; lookahead?: number; enabled?: boolean }): Partial<AppSpec> => ({
  imagePrewarm: { enabled: true, parallelism: 10, lookahead: 1, ...p },
});

/** The pre-warm writes of a plan, e.g. `request n2`, `remove n3`. */
function prewarmWrites(o: Observed): string[] {
  return planned(o, NOW).actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [`request ${a.node}`] : a.kind === 'removePrewarm' ? [`remove ${a.node}`] : []));
}

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
    expect(running.prewarm).toEqual({ nodesRequested: 1, nodesPulled: 0, nodesFailed: 0 });
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

  it('templateImages: containers and init containers, each once, sorted', () => {
    const t = v('v2');
    t.spec.containers.push({ name: 'side', image: 'example.com/init:v2' });
    expect(templateImages(t)).toEqual(['example.com/init:v2', 'example.com/web:v2']);
  });
});
