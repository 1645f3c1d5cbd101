import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import { AbortReason, PauseCause, pausedByValue, RolloutAnnotation } from '../../../api/rollout-abort.ts';
import { parallel, rolling, rolloutWorld, summary, template, type PodRow } from '../../../../test/unit/app/rollout-world.ts';
import { revisionOf } from '../../../../test/unit/app/prewarm-world.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import type { Observed } from '../model/plan.ts';
import { abortRefusal } from './abort-refusal.ts';

const NOW = new Date('2025-06-01T00:10:00.000Z');
const spec: Partial<AppSpec> = { ...parallel, replicas: 4, ...rolling({ maxUnavailable: 1 }) };
const canary: PodRow[] = [
  [0, 'ready', 'old'],
  [1, 'ready', 'old'],
  [2, 'ready', 'new'],
  [3, 'ready', 'new'],
];

/**
 * The rollout from revision 1 to the update revision, numbered 3 when `between` (a revision 2 was made
 * between them: a template changed mid-rollout, or a partition stage), else 2.
 */
function world(
  between: boolean,
  annotations: Record<string, string> = {},
  status: (update: string) => Partial<AppStatus> = () => ({}),
  s: Partial<AppSpec> = spec,
  pods: PodRow[] = canary,
): Observed {
  const update0 = rolloutWorld(s, pods).app.status?.updateRevision ?? '';
  const w = rolloutWorld(s, pods, status(update0));
  const [stable, update] = w.revisions ?? [];
  if (!stable || !update) throw new Error('the world has two revisions');
  if (between) w.revisions = [stable, revisionOf({ ...s, template: template('v1.5') }, 2), { ...update, revision: 3 }];
  const named = { ...annotations };
  for (const [k, v] of Object.entries(named)) if (v === 'UPDATE') named[k] = update.metadata.name;
  w.app.metadata.annotations = named;
  return w;
}

describe('abortRefusal', () => {
  it('lets an abort back one revision go ahead', () => {
    const w = world(false);
    const [current, update] = w.revisions ?? [];
    expect(current && update && abortRefusal({ owned: w.revisions ?? [], current, update })).toBeUndefined();
  });

  it('refuses an abort that would also undo a revision made between the stable and the update revision, naming it', () => {
    const w = world(true);
    const revs = w.revisions ?? [];
    const [current, middle, update] = revs;
    const refusal = current && update && abortRefusal({ owned: revs, current, update });
    expect(refusal).toContain(`${middle?.metadata.name} (2)`);
    expect(refusal).toContain('ebb rollout undo --to-revision');
  });

  it('counts a revision made between even when it was deleted since', () => {
    const w = world(true);
    const [current, , update] = w.revisions ?? [];
    expect(current && update && abortRefusal({ owned: [current, update], current, update })).toContain('1 revision(s)');
  });
});

describe('a refused abort in a plan', () => {
  it("answers a person's request with an Event, removes it and pauses; no pod moves", () => {
    const w = world(true, { [RolloutAnnotation.abort]: 'UPDATE' });
    const p = planned(w, NOW);
    // The update revision spreads no further: ebb pauses the rollout, noting the pause as its own.
    expect(summary(p.actions)).toEqual(['event AbortRefused', 'pauseRollout', 'clearAnnotations']);
    const pause = p.actions.find((a) => a.kind === 'pauseRollout');
    expect(pause?.kind === 'pauseRollout' && pause.pausedBy).toBe(pausedByValue(PauseCause.abortRefused, w.app.status?.updateRevision ?? ''));
    const clear = p.actions.find((a) => a.kind === 'clearAnnotations');
    expect(clear?.kind === 'clearAnnotations' && clear.keys).toEqual([RolloutAnnotation.abort]);
    expect(p.status.abort).toBeUndefined();
    expect(p.status.conditions?.find((c) => c.type === 'Aborted')).toMatchObject({ status: 'False', reason: 'AbortRefused' });
  });

  it('aborts as before when no revision came between', () => {
    const p = planned(world(false, { [RolloutAnnotation.abort]: 'UPDATE' }), NOW);
    expect(summary(p.actions)).toEqual(['event RolloutAborted', 'delete web-3 (update)']);
  });

  it('pauses instead of aborting when the worker finds the failure, and announces it once', () => {
    const s: Partial<AppSpec> = { ...spec, progressDeadlineSeconds: 60, ...rolling({ maxUnavailable: 1, rollbackOnProgressDeadline: true }) };
    /** web-3 updated but never ready, no progress for 5 minutes. */
    const pods: PodRow[] = [
      [0, 'ready', 'old'],
      [1, 'ready', 'old'],
      [2, 'ready', 'old'],
      [3, 'unready', 'new'],
    ];
    const stuck = (revision: string): Partial<AppStatus> => ({
      rolloutProgress: { revision, updatedAvailableReplicas: 0, lastProgressTime: '2025-06-01T00:05:00.000Z' },
    });
    const w = world(true, {}, stuck, s, pods);
    const p = planned(w, NOW);
    const pause = p.actions.find((a) => a.kind === 'pauseRollout');
    const update = w.app.status?.updateRevision ?? '';
    expect(pause?.kind === 'pauseRollout' && pause.pausedBy).toBe(pausedByValue(PauseCause.abortRefused, update));
    expect(summary(p.actions)).toContain('event AbortRefused');
    expect(p.actions.some((a) => a.kind === 'deletePod' || a.kind === 'createPod' || a.kind === 'inPlaceStep')).toBe(false);
    expect(p.status.abort).toBeUndefined();
    const cond = p.status.conditions?.find((c) => c.type === 'Aborted');
    expect(cond).toMatchObject({ status: 'False', reason: 'AbortRefused' });
    expect(cond?.message).toContain(AbortReason.progressDeadline);

    // Paused for it already: nothing is announced or written again.
    const again = world(
      true,
      { [RolloutAnnotation.pausedBy]: pausedByValue(PauseCause.abortRefused, update) },
      stuck,
      {
        ...s,
        ...rolling({ maxUnavailable: 1, rollbackOnProgressDeadline: true, paused: true }),
      },
      pods,
    );
    const q = planned(again, NOW);
    expect(summary(q.actions).filter((a) => a === 'event AbortRefused' || a === 'pauseRollout')).toEqual([]);
  });
});
