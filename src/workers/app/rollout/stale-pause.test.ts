import { describe, expect, it } from 'vitest';
import { PauseCause, pausedByValue, RolloutAnnotation } from '../../../api/rollout-abort.ts';
import { parallel, rolling, rolloutWorld, type PodRow } from '../../../../test/unit/app/rollout-world.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';

const NOW = new Date('2025-06-01T00:10:00.000Z');
const pods: PodRow[] = [
  [0, 'ready', 'old'],
  [1, 'ready', 'old'],
  [2, 'ready', 'new'],
];

/** A paused rollout (old → new), with annotation paused-by naming `revision` (or none: a person's pause). */
function pausedWorld(by: ((update: string, current: string) => string) | undefined) {
  const w = rolloutWorld({ ...parallel, replicas: 3, ...rolling({ maxUnavailable: 1, paused: true }) }, pods);
  const update = w.app.status?.updateRevision ?? '';
  const current = w.app.status?.currentRevision ?? '';
  if (by) w.app.metadata.annotations = { [RolloutAnnotation.pausedBy]: by(update, current) };
  return w;
}
const lifts = (w: ReturnType<typeof pausedWorld>) =>
  planned(w, NOW).actions.some((a) => a.kind === 'pauseRollout' && a.paused === false && a.pausedBy === null);

describe("ebb's pause for an earlier revision", () => {
  it.each(Object.values(PauseCause))('is lifted once the update revision is another one (%s)', (cause) => {
    expect(lifts(pausedWorld((_, current) => pausedByValue(cause, `${current}-earlier`)))).toBe(true);
  });

  it('holds while it is about the update revision', () => {
    expect(lifts(pausedWorld((update) => pausedByValue(PauseCause.canaryStep, update)))).toBe(false);
  });

  it("never lifts a person's pause", () => {
    expect(lifts(pausedWorld(undefined))).toBe(false);
  });
});
