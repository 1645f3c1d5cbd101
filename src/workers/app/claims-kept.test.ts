import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../api/app-spec.ts';
import { makeApp, podFor } from '../../../test/unit/app/fixtures.ts';
import { plan } from './planner.ts';
import { needsInput } from './model/plan.ts';
import { planned } from '../../../test/unit/app/fixtures.ts';
import { revisionData, revisionHash } from './revisions/revisions.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const claimTemplates: AppSpec['volumeClaimTemplates'] = [
  { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
];

/** Pods 0 and 2 of 3 ready, 1 missing (its pod gone, e.g. deleted for a rollout); claims not read. */
function planFor(status: { replicas: number; observedGeneration: number }, spec: Partial<AppSpec> = {}) {
  const app = makeApp('web', { replicas: 3, volumeClaimTemplates: claimTemplates, podManagementPolicy: 'Parallel', ...spec });
  app.metadata.generation = 2;
  const update = `web-${revisionHash(revisionData(app), 0)}`;
  app.status = { ...status, updateRevision: update, currentRevision: update, collisionCount: 0 };
  return plan({ app, pods: [podFor(app, 0, update), podFor(app, 2, update)], revisions: undefined, claims: undefined }, NOW);
}

describe('recreating a replica the status counted', () => {
  it('creates its pod without reading the claims', () => {
    const result = planFor({ replicas: 3, observedGeneration: 2 });
    if (needsInput(result)) throw new Error(`asked for the ${result.needs}`);
    const p = result;
    expect(p.actions.map((a) => (a.kind === 'createPod' ? `create ${a.pod.metadata.name}` : a.kind))).toContain('create web-1');
    expect(p.actions.some((a) => a.kind === 'createPvc')).toBe(false);
  });

  it('counts the replica ordinals, not the ordinal numbers, past a reserved ordinal', () => {
    const app = makeApp('web', { replicas: 3, volumeClaimTemplates: claimTemplates, podManagementPolicy: 'Parallel', reserveOrdinals: [1] });
    app.metadata.generation = 2;
    const update = `web-${revisionHash(revisionData(app), 0)}`;
    app.status = { replicas: 3, observedGeneration: 2, updateRevision: update, currentRevision: update, collisionCount: 0 };
    const p = planned({ app, pods: [podFor(app, 0, update), podFor(app, 2, update)], revisions: undefined, claims: undefined }, NOW);
    expect(p.actions.map((a) => (a.kind === 'createPod' ? `create ${a.pod.metadata.name}` : a.kind))).toContain('create web-3');
  });

  it.each<[string, { replicas: number; observedGeneration: number }, Partial<AppSpec>]>([
    ['the status did not count it (a scale-up)', { replicas: 1, observedGeneration: 2 }, {}],
    ['the status counted fewer replicas than the reserved ordinal skips', { replicas: 2, observedGeneration: 2 }, { reserveOrdinals: [1] }],
    ['the status is of an older generation', { replicas: 3, observedGeneration: 1 }, {}],
    ['scaling deletes claims (whenScaled Delete)', { replicas: 3, observedGeneration: 2 }, { persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' } }],
  ])('reads first (the claims, or the revisions and then the claims) when %s', (_, status, spec) => {
    const p = planFor(status, spec);
    expect(needsInput(p) && ['claims', 'revisions'].includes(p.needs)).toBe(true);
  });
});
