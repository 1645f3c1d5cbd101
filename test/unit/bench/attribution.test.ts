/**
 * The request split of a benchmark window: an Event series patch and a Secret read are ebb's in an ebb window
 * (its worker's Event series and its notifier's namespace Secret), the scheduler's and the background's in a
 * StatefulSet window.
 */
import { describe, expect, it } from 'vitest';
import { attribute } from '../../../bench/lib/attribution.ts';

/** One recreated pod's requests in a rollout wave, both controllers' kinds together. */
const wave = (): Map<string, number> =>
  new Map([
    ['DELETE pods', 3],
    ['POST pods', 3],
    ['POST pods/binding', 3],
    // 3 of the scheduler's `Scheduled` Events and ebb's own 4.
    ['POST events.k8s.io/events', 7],
    ['PATCH events.k8s.io/events', 3],
    ['GET secrets', 1],
    ['PUT coordination.k8s.io/leases', 2],
  ]);

describe('request attribution', () => {
  it("counts an ebb window's Event series patches and Secret reads as ebb's", () => {
    const a = attribute(wave(), 'ebb');
    expect(a.scheduler).toEqual(
      new Map([
        ['POST pods/binding', 3],
        ['POST events.k8s.io/events', 3],
      ]),
    );
    expect(a.controller.get('PATCH events.k8s.io/events')).toBe(3);
    expect(a.controller.get('GET secrets')).toBe(1);
    expect(a.controller.get('POST events.k8s.io/events')).toBe(4);
    expect(a.background).toEqual(new Map([['PUT coordination.k8s.io/leases', 2]]));
  });

  it("leaves a StatefulSet window's series patches to the scheduler and its Secret reads to the background", () => {
    const a = attribute(wave(), 'sts');
    expect(a.scheduler.get('PATCH events.k8s.io/events')).toBe(3);
    expect(a.controller.has('PATCH events.k8s.io/events')).toBe(false);
    expect(a.background.get('GET secrets')).toBe(1);
  });
});
