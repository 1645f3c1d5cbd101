import { describe, expect, it } from 'vitest';
import { RolloutAnnotation } from '../../api/rollout-abort.ts';
import { planAbort } from '../../rollout-actions/control.ts';
import { rolling } from '../../../test/unit/watcher/rollout-actions-fixture.ts';
import { rolloutsPathFor } from './path.ts';
import { ACTION_REQUESTED, actionEvent, actionsFor, planAction } from './actions.ts';

const now = new Date('2026-11-29T12:00:00Z');

describe('the actions the page offers', () => {
  it('offers what would write something: a running rollout may be paused, aborted or restarted', () => {
    expect(actionsFor(rolling(), now)).toEqual(['pause', 'abort', 'restart']);
  });

  it('a paused rollout may be resumed; an aborted one retried, not aborted again', () => {
    expect(actionsFor(rolling({ paused: true }), now)).toContain('resume');
    expect(actionsFor(rolling({ paused: true }), now)).not.toContain('pause');
    const aborted = actionsFor(rolling({ abort: true }), now);
    expect(aborted).toContain('retry');
    expect(aborted).not.toContain('abort');
  });

  it('writes exactly what `ebb rollout abort` writes: the annotation naming the revision, guarded by the resourceVersion', () => {
    const plan = planAction('abort', rolling(), now);
    expect(plan).toEqual(planAbort(rolling()));
    expect(plan).toMatchObject({ kind: 'patch', patch: { metadata: { resourceVersion: '5', annotations: { [RolloutAnnotation.abort]: 'r2' } } } });
  });

  it('records who asked in an Event on the App', () => {
    const e = actionEvent(rolling(), 'abort', 'alice', { now, instance: 'ebb-watcher-0', suffix: 'ab' });
    expect(e).toMatchObject({
      reason: ACTION_REQUESTED,
      type: 'Normal',
      action: 'Abort',
      note: 'abort requested by alice from the rollouts page',
      metadata: { namespace: 'shop' },
      regarding: { kind: 'App', name: 'web', namespace: 'shop', uid: 'u1', apiVersion: 'apps.ebb.dev/v1alpha1' },
    });
  });
});

describe('where the page is mounted', () => {
  it('beside the board, below the same prefix', () => {
    expect(rolloutsPathFor('/board')).toBe('/rollouts');
    expect(rolloutsPathFor('/board/')).toBe('/rollouts');
    expect(rolloutsPathFor('/ebb/board')).toBe('/ebb/rollouts');
    expect(rolloutsPathFor('/a/b/queues')).toBe('/a/b/rollouts');
  });
});
