import { describe, expect, it } from 'vitest';
import { makeApp, podFor, stored } from '../../../../test/unit/app/fixtures.ts';
import type { App } from '../../../api/app.ts';
import type { ControllerRevision, Stored } from '../../../kube/types.ts';
import { plan } from '../planner.ts';
import { needsInput, type Observed } from '../model/plan.ts';
import { appControllerRef } from '../model/owner-refs.ts';
import { historyWithinLimit, revisionCountAfter } from './history.ts';
import { newRevision, revisionData, revisionHash } from './revisions.ts';

const NOW = new Date('2025-01-01T01:00:00Z');

/** An App whose rollout to its template has just updated every pod (all ready): its status still names `web-old` current. */
function completing(revisionCount: number | undefined, limit?: number): { app: Stored<App>; update: string } {
  const app = makeApp('web', limit === undefined ? {} : { revisionHistoryLimit: limit });
  app.metadata.generation = 2;
  const update = `web-${revisionHash(revisionData(app), 0)}`;
  app.status = {
    observedGeneration: 2,
    replicas: 3,
    readyReplicas: 3,
    availableReplicas: 3,
    currentReplicas: 0,
    updatedReplicas: 3,
    currentRevision: 'web-old',
    updateRevision: update,
    collisionCount: 0,
    ...(revisionCount === undefined ? {} : { revisionCount }),
  };
  return { app, update };
}

const observe = (app: Stored<App>, update: string, revisions?: Stored<ControllerRevision>[]): Observed => ({
  app,
  pods: [0, 1, 2].map((o) => podFor(app, o, update)),
  revisions,
  claims: [],
});

describe('revision count', () => {
  it('counts the revisions read plus those created or adopted, never minus those deleted', () => {
    expect(revisionCountAfter(2, [{ kind: 'createRevision' }, { kind: 'adoptRevision' }, { kind: 'deleteRevision' }, { kind: 'renumberRevision' }])).toBe(4);
  });

  it('knows the history within the limit only from a count', () => {
    expect(historyWithinLimit(11, 10)).toBe(true);
    expect(historyWithinLimit(12, 10)).toBe(false);
    expect(historyWithinLimit(undefined, 10)).toBe(false);
    expect(historyWithinLimit(1, 0)).toBe(true);
    expect(historyWithinLimit(2, 0)).toBe(false);
    expect(historyWithinLimit(undefined, -1)).toBe(true);
  });

  it('completes a rollout without reading the revisions when the count shows the history within the limit', () => {
    const { app, update } = completing(2);
    const result = plan(observe(app, update), NOW);
    if (needsInput(result)) throw new Error(`needs ${result.needs}`);
    expect(result.status.currentRevision).toBe(update);
    expect(result.status.revisionCount).toBe(2);
    expect(result.actions.filter((a) => a.kind === 'deleteRevision')).toEqual([]);
  });

  it('reads the revisions to complete a rollout without a count, or with one beyond the limit', () => {
    const unknown = completing(undefined);
    expect(plan(observe(unknown.app, unknown.update), NOW)).toEqual({ needs: 'revisions' });
    const many = completing(3, 1);
    expect(plan(observe(many.app, many.update), NOW)).toEqual({ needs: 'revisions' });
  });

  it('records the count with the revisions read, and truncates from them', () => {
    const { app, update } = completing(3, 1);
    const rev = (name: string, n: number): Stored<ControllerRevision> => {
      const r = newRevision(app, revisionData(app), n, 0);
      return stored({ ...r, metadata: { ...r.metadata, name, ownerReferences: [appControllerRef(app)] } }, `uid-${name}`);
    };
    const result = plan(observe(app, update, [rev('web-older', 1), rev('web-old', 2), rev(update, 3)]), NOW);
    if (needsInput(result)) throw new Error(`needs ${result.needs}`);
    expect(result.actions.filter((a) => a.kind === 'deleteRevision').map((a) => (a.kind === 'deleteRevision' ? a.name : ''))).toEqual(['web-older']);
    expect(result.status.revisionCount).toBe(3);
  });
});
