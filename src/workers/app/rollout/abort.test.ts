import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { AbortReason, PauseCause, pausedByValue, RolloutAnnotation, type AbortStatus } from '../../../api/rollout-abort.ts';
import type { Action } from '../model/actions.ts';
import { parallel, rolling, rolloutWorld, summary, type PodRow } from '../../../../test/unit/app/rollout-world.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import type { Observed } from '../model/plan.ts';
import { plan } from '../planner.ts';
import { needsInput } from '../model/plan.ts';
import { abortState, withAbortStatus } from './abort.ts';

const NOW = new Date('2025-06-01T00:10:00.000Z');
const spec = (ru: object = {}, extra: Partial<AppSpec> = {}): Partial<AppSpec> => ({
  ...parallel,
  replicas: 4,
  ...rolling({ maxUnavailable: 1, ...ru }),
  ...extra,
});
/** A canary at two pods: web-2 and web-3 at the new revision. */
const canary: PodRow[] = [
  [0, 'ready', 'old'],
  [1, 'ready', 'old'],
  [2, 'ready', 'new'],
  [3, 'ready', 'new'],
];

/** The world with the abort of the update revision requested (annotation) and `status` merged in. */
function aborted(s: Partial<AppSpec>, pods: PodRow[], status: (update: string) => Partial<AppStatus> = () => ({})): Observed {
  const base = rolloutWorld(s, pods);
  const update = base.app.status?.updateRevision ?? '';
  const world = rolloutWorld(s, pods, status(update));
  world.app.metadata.annotations = { [RolloutAnnotation.abort]: update };
  return world;
}

const recorded = (update: string, reason: AbortStatus['reason'] = AbortReason.requested): Partial<AppStatus> => ({
  abort: { revision: update, reason, message: 'why', abortedAt: '2025-06-01T00:09:00.000Z' },
});

describe('an aborted plan', () => {
  it('moves the highest pod of the update revision back first, within maxUnavailable, and records the abort once', () => {
    const world = aborted(spec(), canary);
    const p = planned(world, NOW);
    const current = world.app.status?.currentRevision;
    expect(summary(p.actions)).toEqual(['event RolloutAborted', 'delete web-3 (update)']);
    const del = p.actions.find((a) => a.kind === 'deletePod');
    expect(del?.kind === 'deletePod' && del.replacement?.revision).toBe(current);
    expect(p.status.abort).toMatchObject({ revision: world.app.status?.updateRevision, reason: AbortReason.requested, abortedAt: NOW.toISOString() });
    expect(p.status).toMatchObject({ currentRevision: current, updateRevision: world.app.status?.updateRevision, updatedReplicas: 1 });
    expect(p.status.conditions?.find((c) => c.type === 'Aborted')).toMatchObject({ status: 'True', reason: AbortReason.requested });
    expect(p.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'True', reason: 'RollingBack' });
  });

  it('goes back in place where the policy allows', () => {
    const p = planned(aborted(spec({ podUpdatePolicy: 'InPlaceIfPossible' }), canary, recorded), NOW);
    expect(summary(p.actions)).toEqual(['inPlaceStep']);
    const step = p.actions[0];
    expect(step?.kind === 'inPlaceStep' && step.name).toBe('web-3');
  });

  it('never touches a pod of the stable revision, and ends with every pod back (Progressing False)', () => {
    const back: PodRow[] = canary.map(([o]) => [o, 'ready', 'old']);
    const p = planned(aborted(spec(), back, recorded), NOW);
    expect(summary(p.actions)).toEqual([]);
    expect(p.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutAborted' });
    expect(p.status.currentRevision).not.toBe(p.status.updateRevision);
  });

  /** `world` with annotation paused-by added: ebb paused the rollout for `cause`. */
  const ebbPaused = (world: Observed, cause: PauseCause): Observed => {
    const update = world.app.status?.updateRevision ?? '';
    world.app.metadata.annotations = { ...world.app.metadata.annotations, [RolloutAnnotation.pausedBy]: pausedByValue(cause, update) };
    return world;
  };
  const lifts = (a: Action) => (a.kind === 'pauseRollout' ? `pauseRollout ${String(a.paused)} ${String(a.pausedBy)}` : a.kind);

  it('lifts a pause a canary step set, and moves nothing in that plan', () => {
    const steps = [{ replicas: 2 }, { pause: {} }];
    const world = aborted(spec({ paused: true, canary: { steps } }), canary, (u) => ({
      ...recorded(u),
      canary: { step: 1, pausedAt: '2025-06-01T00:05:00.000Z' },
    }));
    const p = planned(ebbPaused(world, PauseCause.canaryStep), NOW);
    expect(p.actions.map(lifts)).toEqual(['pauseRollout false null']);
    expect(p.status.canary).toEqual({ step: 1, pausedAt: '2025-06-01T00:05:00.000Z' });
  });

  it.each([PauseCause.analysisInconclusive, PauseCause.progressDeadline])('lifts a pause ebb set for %s', (cause) => {
    const p = planned(ebbPaused(aborted(spec({ paused: true }), canary, recorded), cause), NOW);
    expect(p.actions.map(lifts)).toEqual(['pauseRollout false null']);
  });

  it('holds while a person paused the rollout, a canary pause step in force or not', () => {
    expect(summary(planned(aborted(spec({ paused: true }), canary, recorded), NOW).actions)).toEqual([]);
    const steps = [{ replicas: 2 }, { pause: {} }];
    const atStep = aborted(spec({ paused: true, canary: { steps } }), canary, (u) => ({
      ...recorded(u),
      canary: { step: 1, pausedAt: '2025-06-01T00:05:00.000Z' },
    }));
    expect(summary(planned(atStep, NOW).actions)).toEqual([]);
  });

  it('needs the revisions when the stable template was not read', () => {
    const world = aborted(spec(), canary, recorded);
    const r = plan(
      { ...world, revisions: undefined, app: { ...world.app, status: { ...world.app.status, observedGeneration: world.app.metadata.generation } } },
      NOW,
    );
    expect(needsInput(r) && r.needs).toBe('revisions');
  });
});

describe('abortState', () => {
  const app = (status: Partial<AppStatus>) => rolloutWorld(spec(), canary, status).app;
  const withAnnotations = (a: ReturnType<typeof app>, annotations: Record<string, string>) => ({ ...a, metadata: { ...a.metadata, annotations } });
  const names = { current: 'web-1', update: 'web-2' };

  it('keeps a recorded abort until retried by its abortedAt, or until a new revision', () => {
    const rec = recorded('web-2', AbortReason.progressDeadline);
    expect(abortState(app(rec), names, NOW).abort).toEqual(rec.abort);
    expect(abortState(withAnnotations(app(rec), { [RolloutAnnotation.retry]: 'an older one' }), names, NOW).abort).toEqual(rec.abort);
    expect(abortState(withAnnotations(app(rec), { [RolloutAnnotation.retry]: rec.abort!.abortedAt }), names, NOW)).toMatchObject({
      abort: undefined,
      ended: 'retried',
    });
    expect(abortState(app(rec), { current: 'web-1', update: 'web-3' }, NOW)).toMatchObject({ abort: undefined, ended: 'newRevision' });
  });

  it('ends a requested abort when its annotation is withdrawn; ignores a request naming another revision', () => {
    expect(abortState(app(recorded('web-2')), names, NOW)).toMatchObject({ abort: undefined, ended: 'retried' });
    expect(abortState(withAnnotations(app({}), { [RolloutAnnotation.abort]: 'web-1' }), names, NOW).abort).toBeUndefined();
  });

  it('starts from a trigger (the deadline, an analysis with its measurement); never without a rollout', () => {
    const measurement = { analysis: 'error-rate', value: '0.2', condition: 'result < 0.05' };
    const s = abortState(app({}), names, NOW, [{ reason: AbortReason.analysisFailed, message: 'error rate too high', measurement }]);
    expect(s).toMatchObject({ started: true, abort: { reason: AbortReason.analysisFailed, measurement } });
    expect(withAbortStatus({}, s, NOW, 1).conditions?.[0]?.message).toContain('(error-rate: 0.2, result < 0.05)');
    expect(abortState(app({}), { current: 'web-2', update: 'web-2' }, NOW, [{ reason: AbortReason.progressDeadline, message: 'x' }]).abort).toBeUndefined();
  });
});
