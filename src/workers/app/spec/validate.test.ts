import { describe, expect, it } from 'vitest';
import { MAX_REPLICAS } from '../../../api/app-spec.ts';
import { makeApp } from '../../../../test/unit/app/fixtures.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import { isLabelKey, specProblems } from './validate.ts';

describe('isLabelKey', () => {
  it.each(['app', 'app.kubernetes.io/name', 'tier.example.com/A_b.c-D', 'x'.repeat(63), `${'a'.repeat(253)}/x`, 'a/B'])('accepts %s', (key) => {
    expect(isLabelKey(key)).toBe(true);
  });
  it.each(['', 'ünï', 'a/b/c', 'x'.repeat(64), '-lead', 'trail-', 'Upper.Case/x', `${'a'.repeat(254)}/x`, '/x', 'a/', 'has space'])('refuses %j', (key) => {
    expect(isLabelKey(key)).toBe(false);
  });
});

describe('specProblems', () => {
  // Found by the spec fuzz: such Apps were accepted, then their revision was refused and nothing said why.
  it('names label keys the apiserver would refuse on the pods, claims or revisions', () => {
    const app = makeApp('web', {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', ünï: 'v' } }, spec: { containers: [{ name: 'main', image: 'registry.example/web:v1' }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data', labels: { 'a/b/c': 'v' } }, spec: { accessModes: ['ReadWriteOnce'] } }],
    });
    expect(specProblems(app)).toEqual([
      'spec.template.metadata.labels: "ünï" is not a valid label key',
      'spec.volumeClaimTemplates[0].metadata.labels: "a/b/c" is not a valid label key',
    ]);
  });

  it(`refuses more than ${MAX_REPLICAS} replicas`, () => {
    expect(specProblems(makeApp('web', { replicas: MAX_REPLICAS }))).toEqual([]);
    expect(specProblems(makeApp('web', { replicas: MAX_REPLICAS + 1 }))).toEqual([
      `spec.replicas: ${MAX_REPLICAS + 1} is more than the ${MAX_REPLICAS} pods an App may have`,
    ]);
  });

  // Found by the spec fuzz: the pod past ordinal 2^31 - 1 was created, then not recognised as a replica, so a
  // rollout waited for it forever without a word.
  it('refuses a highest ordinal above 2^31 - 1', () => {
    expect(specProblems(makeApp('web', { replicas: 1, ordinals: { start: 2 ** 31 - 1 } }))).toEqual([]);
    expect(specProblems(makeApp('web', { replicas: 2, ordinals: { start: 2 ** 31 - 1 } }))).toEqual([
      'spec.ordinals.start: the highest pod ordinal, 2147483648, is above 2147483647',
    ]);
  });

  // An App stored with replicas 2^31 - 1 (int32 allowed it) made the planner build one pod per missing
  // replica: every attempt ran the worker out of memory. It is now InvalidSpec at once.
  it('plans an App with int32-max replicas as InvalidSpec, without walking its ordinals', () => {
    const app = makeApp('web', { replicas: 2 ** 31 - 1, podManagementPolicy: 'Parallel' });
    const started = Date.now();
    const p = planned({ app, pods: [], revisions: [], claims: [] }, new Date());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(p.actions.map((a) => a.kind)).toEqual(['event']);
    expect(p.status.conditions).toContainEqual(expect.objectContaining({ type: 'InvalidSpec', status: 'True' }));
  });
});
