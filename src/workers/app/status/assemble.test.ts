import { describe, expect, it } from 'vitest';
import type { AppStatus } from '../../../api/app-status.ts';
import { makeApp, podFor, stored } from '../../../../test/unit/app/fixtures.ts';
import type { ControllerRevision } from '../../../kube/types.ts';
import { newRevision, revisionData } from '../revisions/revisions.ts';
import type { Action } from '../model/actions.ts';
import { plan } from '../planner.ts';
import { assembleStatus, asReadOf, STATUS_ORDER, statusViews, type StatusContribution, type StatusPart } from './assemble.ts';
import { statusAfterFailure } from './after-failure.ts';

/** A contribution that appends its part's name to `trail`, and its view. */
const tracing = (part: StatusPart): StatusContribution => ({
  part,
  apply: (status, view): AppStatus => ({ ...status, labelSelector: `${status.labelSelector ?? ''}${part}:${view};` }),
});

describe('assembleStatus', () => {
  it('applies every contribution once, in STATUS_ORDER, whatever order they come in', () => {
    const shuffled = [...STATUS_ORDER].reverse().map(tracing);
    expect(assembleStatus(shuffled, 'planned').labelSelector).toBe(STATUS_ORDER.map((p) => `${p}:planned;`).join(''));
  });

  it('passes the view to each part: planned or as read', () => {
    const parts = [tracing('prewarm'), tracing('replicas')];
    expect(assembleStatus(parts, 'asRead').labelSelector).toBe('replicas:asRead;prewarm:asRead;');
    const views = statusViews(parts);
    expect(views.status.labelSelector).toBe('replicas:planned;prewarm:planned;');
    expect(views.statusAsRead().labelSelector).toBe('replicas:asRead;prewarm:asRead;');
  });

  it('refuses a part that contributes twice (a wrapper applied twice)', () => {
    expect(() => assembleStatus([tracing('prewarm'), tracing('prewarm')], 'planned')).toThrow(/twice/);
  });
});

describe("a plan's three views", () => {
  const NOW = new Date('2025-06-01T00:00:00Z');
  /** Three pods and a fourth wanted: the plan creates web-3. */
  function scaling() {
    const app = makeApp('web', { replicas: 4, podManagementPolicy: 'Parallel' });
    const rev = stored<ControllerRevision>(newRevision(app, revisionData(app), 1, 0), 'rev-1');
    app.status = { currentRevision: rev.metadata.name, updateRevision: rev.metadata.name };
    const pods = [0, 1, 2].map((i) => podFor(app, i, rev.metadata.name));
    const result = plan({ app, pods, revisions: [rev], claims: [] }, NOW);
    if ('needs' in result) throw new Error(`plan needs ${result.needs}`);
    return { app, result };
  }

  it('planned counts the pod the plan creates; as read counts the pods as they are', () => {
    const { result } = scaling();
    expect(result.actions.some((a) => a.kind === 'createPod')).toBe(true);
    expect(result.status.replicas).toBe(4);
    expect(asReadOf(result).replicas).toBe(3);
  });

  it('after failure: the status as read, with the condition the failed create left', () => {
    const { result } = scaling();
    const create = result.actions.find((a): a is Extract<Action, { kind: 'createPod' }> => a.kind === 'createPod');
    if (!create) throw new Error('no create');
    const failed = statusAfterFailure(asReadOf(result), { action: create, code: 'Forbidden', detail: 'quota', heals: true, now: NOW, generation: 1 });
    expect(failed.replicas).toBe(3);
    expect(failed.conditions?.find((c) => c.type === 'FailedCreatePod')).toMatchObject({ status: 'True', reason: 'CreatePodRetrying' });
  });

  it('a plan without a view as read is read as planned', () => {
    const status: AppStatus = { replicas: 2 };
    expect(asReadOf({ status })).toBe(status);
  });
});
