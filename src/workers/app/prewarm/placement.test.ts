import { describe, expect, it } from 'vitest';
import type { PodTemplateSpec } from '../../../api/pod-template.ts';
import { tolerates } from '../../../kube/tolerations.ts';
import { canPlace, placementRefusal, requirementMatches, termMatches } from './placement.ts';
import type { NodeFacts } from '../model/node-facts.ts';

const node = (over: Partial<NodeFacts> = {}): NodeFacts => ({
  name: 'n1',
  labels: { zone: 'a', pool: 'web', cores: '8' },
  taints: [],
  unschedulable: false,
  ...over,
});
const template = (spec: Record<string, unknown>): PodTemplateSpec => ({ spec: { containers: [{ name: 'c', image: 'i' }], ...spec } });

describe('requirementMatches', () => {
  it.each<[string, { key: string; operator: string; values?: string[] }, string | undefined, boolean]>([
    ['In, present and listed', { key: 'k', operator: 'In', values: ['a', 'b'] }, 'b', true],
    ['In, present, not listed', { key: 'k', operator: 'In', values: ['a'] }, 'b', false],
    ['In, absent', { key: 'k', operator: 'In', values: ['a'] }, undefined, false],
    ['NotIn, absent', { key: 'k', operator: 'NotIn', values: ['a'] }, undefined, true],
    ['NotIn, listed', { key: 'k', operator: 'NotIn', values: ['a'] }, 'a', false],
    ['Exists', { key: 'k', operator: 'Exists' }, '', true],
    ['Exists, absent', { key: 'k', operator: 'Exists' }, undefined, false],
    ['DoesNotExist, absent', { key: 'k', operator: 'DoesNotExist' }, undefined, true],
    ['DoesNotExist, present', { key: 'k', operator: 'DoesNotExist' }, 'x', false],
    ['Gt, greater', { key: 'k', operator: 'Gt', values: ['4'] }, '8', true],
    ['Gt, equal', { key: 'k', operator: 'Gt', values: ['8'] }, '8', false],
    ['Lt, smaller', { key: 'k', operator: 'Lt', values: ['10'] }, '8', true],
    ['Gt, not an integer', { key: 'k', operator: 'Gt', values: ['4'] }, 'big', false],
    ['Gt, two values', { key: 'k', operator: 'Gt', values: ['4', '5'] }, '8', false],
    ['an unknown operator', { key: 'k', operator: 'Like', values: ['a'] }, 'a', false],
  ])('%s', (_what, req, value, want) => {
    expect(requirementMatches(req, value)).toBe(want);
  });
});

describe('termMatches', () => {
  it('ANDs expressions and fields; an empty term matches nothing', () => {
    const n = node();
    expect(termMatches({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, n)).toBe(true);
    expect(
      termMatches(
        { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] },
        n,
      ),
    ).toBe(false);
    expect(termMatches({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }, n)).toBe(true);
    expect(termMatches({ matchFields: [{ key: 'spec.other', operator: 'Exists' }] }, n)).toBe(false);
    expect(termMatches({}, n)).toBe(false);
  });
});

describe('tolerates', () => {
  const taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  it.each<[string, Record<string, string>, boolean]>([
    ['Equal with key, value and effect', { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, true],
    ['operator defaults to Equal', { key: 'dedicated', value: 'gpu' }, true],
    ['another value', { key: 'dedicated', operator: 'Equal', value: 'cpu' }, false],
    ['another effect', { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, false],
    ['Exists on the key', { key: 'dedicated', operator: 'Exists' }, true],
    ['Exists with no key: every taint', { operator: 'Exists' }, true],
    ['Equal with no key: nothing', { operator: 'Equal', value: 'gpu' }, false],
    ['another key', { key: 'other', operator: 'Exists' }, false],
  ])('%s', (_what, toleration, want) => {
    expect(tolerates(toleration, taint)).toBe(want);
  });
});

describe('placementRefusal', () => {
  it.each<[string, Record<string, unknown>, Partial<NodeFacts>, string | undefined]>([
    ['no constraints, an untainted node', {}, {}, undefined],
    ['nodeSelector matches', { nodeSelector: { pool: 'web' } }, {}, undefined],
    ['nodeSelector does not match', { nodeSelector: { pool: 'db' } }, {}, 'label pool is not db'],
    [
      'required affinity: one of two terms matches',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
                { matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] },
              ],
            },
          },
        },
      },
      {},
      undefined,
    ],
    [
      'required affinity: no term matches',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }] },
          },
        },
      },
      {},
      'no required node affinity term matches',
    ],
    [
      'preferred affinity only: no constraint',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z'] }] } },
            ],
          },
        },
      },
      {},
      undefined,
    ],
    [
      'a NoSchedule taint not tolerated',
      {},
      { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      'taint dedicated:NoSchedule not tolerated',
    ],
    ['a NoExecute taint not tolerated', {}, { taints: [{ key: 'gone', effect: 'NoExecute' }] }, 'taint gone:NoExecute not tolerated'],
    ['a PreferNoSchedule taint does not refuse', {}, { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }, undefined],
    [
      'a tolerated taint',
      { tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
      { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      undefined,
    ],
    ['a cordoned node', {}, { unschedulable: true }, 'taint node.kubernetes.io/unschedulable:NoSchedule not tolerated'],
    [
      'a cordoned node, tolerated',
      { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] },
      { unschedulable: true },
      undefined,
    ],
  ])('%s', (_what, spec, over, want) => {
    expect(placementRefusal(template(spec), node(over))).toBe(want);
    expect(canPlace(template(spec), node(over))).toBe(want === undefined);
  });
});
