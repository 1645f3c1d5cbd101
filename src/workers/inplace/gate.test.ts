import { describe, expect, it } from 'vitest';
import { Annotation } from '../../api/keys.ts';
import { IN_PLACE_GATE, needsGateReady, withInPlaceReadinessGate } from './gate.ts';
import { inPlaceStatus, podIsUpdatingInPlace } from './status.ts';
import type { Pod } from '../../kube/types.ts';

const template = { spec: { containers: [{ name: 'a', image: 'x' }], readinessGates: [{ conditionType: 'example.com/lb' }] } };

describe('withInPlaceReadinessGate', () => {
  it.each([
    [undefined, ['example.com/lb']],
    ['ReCreate', ['example.com/lb']],
    ['InPlaceIfPossible', ['example.com/lb', IN_PLACE_GATE]],
    ['InPlaceOnly', ['example.com/lb', IN_PLACE_GATE]],
  ])('policy %s → gates %o', (policy, gates) => {
    const out = withInPlaceReadinessGate(template, policy);
    expect(out.spec.readinessGates.map((g) => g.conditionType)).toEqual(gates);
    expect(template.spec.readinessGates).toHaveLength(1);
  });

  it('does not add the gate twice', () => {
    const once = withInPlaceReadinessGate(template, 'InPlaceOnly');
    expect(withInPlaceReadinessGate(once, 'InPlaceOnly')).toBe(once);
  });
});

function pod(conditions: { type: string; status: string; reason?: string }[], annotated = false, gated = true): Pod {
  return {
    metadata: { name: 'p', ...(annotated ? { annotations: { [Annotation.inPlaceUpdateState]: 'x' } } : {}) },
    spec: { containers: [], ...(gated ? { readinessGates: [{ conditionType: IN_PLACE_GATE }] } : {}) },
    status: { conditions },
  };
}

describe('pod predicates', () => {
  const started = { type: IN_PLACE_GATE, status: 'False', reason: 'StartInPlaceUpdate' };
  const ready = { type: IN_PLACE_GATE, status: 'True', reason: 'PodCreated' };
  it.each<[string, Pod, boolean, boolean]>([
    ['a new gated pod', pod([]), true, false],
    ['a gated pod set ready', pod([ready]), false, false],
    ['a pod without the gate', pod([], false, false), false, false],
    ['an update in progress', pod([started], true), false, true],
    ['gate False from an update but no state', pod([started]), true, true],
    ['state but gate not written yet (read between writes elsewhere)', pod([ready], true), false, true],
  ])('%s: needsGateReady %s, updating %s', (_n, p, needs, updating) => {
    expect(needsGateReady(p)).toBe(needs);
    expect(podIsUpdatingInPlace(p)).toBe(updating);
    expect(inPlaceStatus(p).updating).toBe(updating);
  });
});
