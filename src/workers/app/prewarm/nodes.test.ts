import { describe, expect, it } from 'vitest';
import type { PodTemplateSpec } from '../../../api/pod-template.ts';
import type { Named, Pod } from '../../../kube/types.ts';
import { plan } from '../planner.ts';
import { needsInput, type Observed } from '../model/plan.ts';
import { allOld, held, NOW, prewarm, prewarmWrites, rolling, world, type PodTuple, type World } from '../../../../test/unit/app/prewarm-world.ts';
import { nodeFacts, nodeReadSelector, poolNodes, poolSelector, scaleUpNodes, unplacedReplicas } from './nodes.ts';
import type { NodeFacts } from '../model/node-facts.ts';

const facts = (name: string, labels: Record<string, string> = {}, taints: NodeFacts['taints'] = []): NodeFacts => ({
  name,
  labels,
  taints,
  unschedulable: false,
});
const POOL = { pool: 'web' };
const pooled = (name: string): NodeFacts => facts(name, POOL);
const allNew = (n: number): PodTuple[] => Array.from({ length: n }, (_, i): PodTuple => [i, 'new']);
const withPool = (p: object = {}) => ({ imagePrewarm: { enabled: true, parallelism: 10, lookahead: 1, nodeSelector: POOL, ...p } });
const observe = (w: World, nodes: NodeFacts[] | undefined): Observed => ({ ...world(w), nodes });
const podOn = (name: string, node: string): Named<Pod> => ({ metadata: { name }, spec: { nodeName: node } }) as Named<Pod>;

describe('nodes pre-warming chooses without a pod on them', () => {
  it('poolSelector: only a non-empty selector with pre-warm enabled', () => {
    expect(poolSelector({ spec: withPool() } as never)).toEqual(POOL);
    expect(poolSelector({ spec: { imagePrewarm: { enabled: false, nodeSelector: POOL } } } as never)).toBeUndefined();
    expect(poolSelector({ spec: { imagePrewarm: { enabled: true, nodeSelector: {} } } } as never)).toBeUndefined();
  });

  it("nodeReadSelector: the pool's labels, else the template's nodeSelector, sorted", () => {
    expect(nodeReadSelector({ spec: { ...withPool({ nodeSelector: { z: '1', a: '2' } }), template: {} } } as never)).toBe('a=2,z=1');
    expect(nodeReadSelector({ spec: { imagePrewarm: { enabled: true }, template: { spec: { nodeSelector: { disk: 'ssd' } } } } } as never)).toBe('disk=ssd');
    expect(nodeReadSelector({ spec: { imagePrewarm: { enabled: true }, template: {} } } as never)).toBe('');
  });

  it('nodeFacts reads labels, taints and cordoning', () => {
    const taints = [{ key: 'k', effect: 'NoSchedule' }];
    expect(nodeFacts({ metadata: { name: 'a', labels: POOL }, spec: { taints, unschedulable: true } })).toEqual({
      name: 'a',
      labels: POOL,
      taints,
      unschedulable: true,
    });
    expect(nodeFacts({ metadata: { name: 'b' } })).toEqual({ name: 'b', labels: {}, taints: [], unschedulable: false });
  });

  it('poolNodes: every node carrying all of the selector, sorted', () => {
    expect(
      poolNodes({ pool: 'web', zone: 'a' }, undefined, [
        facts('c', { pool: 'web', zone: 'a' }),
        facts('b', POOL),
        facts('a', { pool: 'web', zone: 'a', x: '1' }),
      ]),
    ).toEqual(['a', 'c']);
  });

  it.each<[string, NodeFacts['taints'], unknown[] | undefined, boolean]>([
    ['no taint', [], undefined, true],
    ['NoSchedule, not tolerated', [{ key: 'gpu', effect: 'NoSchedule' }], undefined, false],
    ['NoExecute, not tolerated', [{ key: 'gpu', value: 'a100', effect: 'NoExecute' }], [{ key: 'gpu', value: 'h100', operator: 'Equal' }], false],
    ['PreferNoSchedule: no bar', [{ key: 'gpu', effect: 'PreferNoSchedule' }], undefined, true],
    ['tolerated by key and value', [{ key: 'gpu', value: 'a100', effect: 'NoSchedule' }], [{ key: 'gpu', value: 'a100' }], true],
    ['tolerated by Exists', [{ key: 'gpu', effect: 'NoExecute' }], [{ operator: 'Exists' }], true],
    [
      'one of two tolerated',
      [
        { key: 'gpu', effect: 'NoSchedule' },
        { key: 'team', effect: 'NoSchedule' },
      ],
      [{ key: 'gpu', operator: 'Exists' }],
      false,
    ],
  ])('poolNodes: a pool node with %s gets entries only when the template tolerates its taints', (_name, taints, tolerations, included) => {
    const template = { spec: { containers: [], ...(tolerations ? { tolerations } : {}) } } as unknown as PodTemplateSpec;
    expect(poolNodes(POOL, template, [facts('n', POOL, taints), pooled('plain')])).toEqual(included ? ['n', 'plain'] : ['plain']);
  });

  it('poolNodes: a cordoned node stays in the pool (drained for a while, not left)', () => {
    expect(poolNodes(POOL, undefined, [{ ...pooled('cordoned'), unschedulable: true }])).toEqual(['cordoned']);
  });

  it('unplacedReplicas: ordinals with no pod, and pods the scheduler could not place that are not going away', () => {
    const refused = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable' };
    const unschedulable = { metadata: { name: 'w-1' }, spec: {}, status: { conditions: [refused] } } as Named<Pod>;
    const leaving = { metadata: { name: 'w-2', deletionTimestamp: '2025-01-01T00:00:00Z' }, spec: {}, status: { conditions: [refused] } } as Named<Pod>;
    const justCreated = { metadata: { name: 'w-3' }, spec: {} } as Named<Pod>;
    const replicas = new Map<number, Named<Pod>>([
      [0, podOn('w-0', 'n0')],
      [1, unschedulable],
      [2, leaving],
      [3, justCreated],
    ]);
    expect(unplacedReplicas([0, 1, 2, 3, 4, 5], replicas)).toBe(3);
  });

  it('scaleUpNodes: placeable nodes, fewest of the App’s pods first, two per waiting pod', () => {
    const template = { spec: { containers: [], nodeSelector: { disk: 'ssd' } } } as unknown as PodTemplateSpec;
    const ssd = { disk: 'ssd' };
    const nodes = [
      facts('busy', ssd),
      facts('hdd', { disk: 'hdd' }),
      facts('tainted', ssd, [{ key: 'dedicated', effect: 'NoSchedule' }]),
      facts('c', ssd),
      facts('b', ssd),
      facts('a', ssd),
    ];
    const pods = [podOn('w-0', 'busy'), podOn('w-1', 'busy'), podOn('w-2', 'a')];
    expect(scaleUpNodes(template, nodes, 1, pods)).toEqual(['b', 'c']);
    expect(scaleUpNodes(template, nodes, 2, pods)).toEqual(['b', 'c', 'a', 'busy']);
    expect(scaleUpNodes(template, nodes, 0, pods)).toEqual([]);
  });
});

describe('pre-warm in the plan: warm pool, scale-up, ReCreate', () => {
  const steady = { spec: withPool(), pods: allNew(4) };
  const poolNodesRead = [pooled('p1'), pooled('p2'), facts('other')];

  it('a warm pool reads the ImageLists, then the Nodes, even for a steady App', () => {
    const first = plan(observe({ ...steady, lists: undefined }, undefined), NOW);
    expect(needsInput(first) ? first.needs : 'nothing').toBe('imageLists');
    const second = plan(observe({ ...steady, lists: [] }, undefined), NOW);
    expect(needsInput(second) ? second.needs : 'nothing').toBe('nodes');
    // No pool, no scale-up, no rollout: nothing is read.
    const none = plan(observe({ pods: allNew(4), lists: undefined }, undefined), NOW);
    expect(needsInput(none)).toBe(false);
  });

  it.each<[string, World, NodeFacts[], string[]]>([
    ['a steady App with a pool: every pool node', { ...steady, lists: [] }, poolNodesRead, ['request p1', 'request p2']],
    ['a pool node holding the images already: nothing more', { ...steady, lists: [held('p1')] }, poolNodesRead, ['request p2']],
    ['a node that left the pool is cleared', { ...steady, lists: [held('p1'), held('gone')] }, poolNodesRead, ['request p2', 'remove gone']],
    ['a node that joined the pool is requested', { ...steady, lists: [held('p1'), held('p2')] }, [...poolNodesRead, pooled('p3')], ['request p3']],
    ['the pool within parallelism', { spec: withPool({ parallelism: 1 }), pods: allNew(4), lists: [] }, poolNodesRead, ['request p1']],
    [
      'the pool turned off: its entries cleared',
      { pods: allNew(4), prewarmStatus: true, lists: [held('p1'), held('p2')] },
      poolNodesRead,
      ['remove p1', 'remove p2'],
    ],
    [
      'a pool during a rollout: the next pod’s node first, then the pool; nothing cleared',
      { spec: withPool(), pods: allOld(4), lists: [held('gone')] },
      poolNodesRead,
      ['request n2', 'request p1', 'request p2'],
    ],
    [
      'a scale-up (OrderedReady, 4 to 6): pod 4 is created now, pod 5 waits: two nodes for it, fewest pods first',
      { spec: { replicas: 6, podManagementPolicy: 'OrderedReady' }, pods: allNew(4), lists: [] },
      [facts('n0'), facts('n1'), facts('n2'), facts('n3'), facts('e2'), facts('e1'), facts('t', {}, [{ key: 'k', effect: 'NoExecute' }])],
      ['request e1', 'request e2'],
    ],
    [
      'a scale-up of Parallel pods created now: nothing (they are placed before a pull could end)',
      { spec: { replicas: 6 }, pods: allNew(4), lists: [] },
      [facts('e1'), facts('e2')],
      [],
    ],
    [
      'a scale-up with a pool: the pool only',
      { spec: { replicas: 6, podManagementPolicy: 'OrderedReady', ...withPool() }, pods: allNew(4), lists: [] },
      [...poolNodesRead, facts('e1')],
      ['request p1', 'request p2'],
    ],
    ['a scale-up done: its entries cleared', { pods: allNew(4), prewarmStatus: true, lists: [held('e1')] }, [facts('e1')], ['remove e1']],
  ])('%s', (_what, w, nodes, writes) => {
    expect(prewarmWrites(observe(w, nodes))).toEqual(writes);
  });

  it('a pool that matches no node says so in ImagesPrewarmed', () => {
    const p = plan(observe({ ...steady, lists: [] }, [facts('other')]), NOW);
    const condition = needsInput(p) ? undefined : p.status.conditions?.find((c) => c.type === 'ImagesPrewarmed');
    expect(condition).toMatchObject({ status: 'False', reason: 'PrewarmPending', message: "no node matches the warm pool's nodeSelector (pool=web)" });
  });

  it('the last pod recreated but not available yet: entries kept and the status stays, then cleared', () => {
    const w = world({ pods: allNew(4), prewarmStatus: true, lists: [held('n2'), held('n3')] });
    const last = w.pods.find((p) => p.metadata.name === 'web-3');
    last!.status = { ...last!.status, conditions: [{ type: 'Ready', status: 'False' }] };
    expect(prewarmWrites(w)).toEqual([]);
    const p = plan(w, NOW);
    expect(needsInput(p) ? undefined : p.status.prewarm).toMatchObject({ nodesRequested: 2 });
    last!.status = { ...last!.status, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-05-31T00:00:00Z' }] };
    expect(prewarmWrites(w)).toEqual(['remove n2', 'remove n3']);
  });

  it('the last pod deleted to be recreated: entries kept until its replacement is available', () => {
    const w = world({ pods: [...allNew(3), [3, 'old']], prewarmStatus: true, lists: [held('n3')] });
    const p = plan(w, NOW);
    expect(needsInput(p) ? [] : p.actions.map((a) => a.kind)).toContain('deletePod');
    expect(prewarmWrites(w)).toEqual([]);
    expect(needsInput(p) ? undefined : p.status.prewarm).toMatchObject({ nodesRequested: 1 });
  });

  it('a scale-up waits for no Node read once every pod is placed', () => {
    const p = plan(observe({ pods: allNew(4), lists: [] }, undefined), NOW);
    expect(needsInput(p)).toBe(false);
  });

  it.each(['ReCreate', 'InPlaceIfPossible'])('%s, paused at a canary step: every remaining pod’s node', (podUpdatePolicy) => {
    const w: World = {
      spec: rolling({ podUpdatePolicy, canary: { steps: [{ replicas: 1 }, { pause: {} }] } }),
      pods: [
        [0, 'old'],
        [1, 'old'],
        [2, 'old'],
        [3, 'new'],
      ],
      lists: [],
    };
    expect(prewarmWrites(world(w))).toEqual(['request n2', 'request n1', 'request n0']);
  });

  it('ReCreate, running: the node of the pod after the one recreated now', () => {
    expect(prewarmWrites(world({ spec: { ...rolling({ podUpdatePolicy: 'ReCreate' }), ...prewarm({ lookahead: 1 }) }, pods: allOld(4), lists: [] }))).toEqual([
      'request n2',
    ]);
  });
});
