/** The seam: the App planner's own pod and template types go into this module's API unchanged. */
import { describe, expect, it } from 'vitest';
import type { PodTemplateSpec } from '../../api/pod-template.ts';
import type { Pod } from '../../kube/types.ts';
import {
  canUpdateInPlace,
  decideUpdate,
  EMPTY_PLAN,
  inPlaceStatus,
  needsGateReady,
  nextInPlaceStep,
  podIsUpdatingInPlace,
  withInPlaceReadinessGate,
} from './index.ts';

describe('in-place API with the App planner types', () => {
  it('accepts a planner Pod and an API PodTemplateSpec', () => {
    const from: PodTemplateSpec = { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'app', image: 'x:1' }] } };
    const to: PodTemplateSpec = { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'app', image: 'x:2' }] } };
    const pod: Pod = { metadata: { name: 'web-0', labels: { 'apps.ebb.dev/revision': 'web-a' } }, spec: { containers: [{ name: 'app', image: 'x:1' }] } };

    const decision = decideUpdate('InPlaceIfPossible', canUpdateInPlace(from, to, { resizeSupported: true }));
    expect(decision.mode).toBe('inPlace');
    const plan = decision.mode === 'inPlace' ? decision.plan : EMPTY_PLAN;
    expect(nextInPlaceStep(pod, { revision: 'web-b', plan, gracePeriodSeconds: 0 }, new Date()).kind).toBe('start');
    expect(podIsUpdatingInPlace(pod)).toBe(false);
    expect(inPlaceStatus(pod).phase).toBe('Idle');
    expect(needsGateReady(pod)).toBe(false);
    expect(withInPlaceReadinessGate(to, 'InPlaceOnly').spec.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
  });
});
