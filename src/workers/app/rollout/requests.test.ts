import { describe, expect, it } from 'vitest';
import { RolloutAnnotation } from '../../../api/rollout-abort.ts';
import type { App } from '../../../api/app.ts';
import type { Stored } from '../../../kube/types.ts';
import { makeApp } from '../../../../test/unit/app/fixtures.ts';
import { clearServed, servedAnnotations } from './requests.ts';

const names = { current: 'web-1', update: 'web-2' };
function app(annotations: Record<string, string>, paused = false, abortedAt?: string): Stored<App> {
  const a = makeApp('web', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused } } });
  a.metadata.annotations = annotations;
  if (abortedAt) a.status = { abort: { revision: 'web-2', reason: 'AbortRequested', message: 'm', abortedAt } };
  return a;
}

describe('servedAnnotations', () => {
  it('keeps a promote or an abort naming the rollout in progress, removes one naming another or none', () => {
    const both = { [RolloutAnnotation.promote]: 'web-2', [RolloutAnnotation.abort]: 'web-2' };
    expect(servedAnnotations(app(both), names)).toEqual([]);
    expect(servedAnnotations(app(both), { current: 'web-2', update: 'web-2' })).toEqual([RolloutAnnotation.promote, RolloutAnnotation.abort]);
    expect(servedAnnotations(app(both), { current: 'web-2', update: 'web-3' })).toEqual([RolloutAnnotation.promote, RolloutAnnotation.abort]);
  });

  it('keeps a retry until the abort it names is no longer recorded', () => {
    const retry = { [RolloutAnnotation.retry]: '2025-06-01T00:00:00.000Z' };
    expect(servedAnnotations(app(retry, false, '2025-06-01T00:00:00.000Z'), names)).toEqual([]);
    expect(servedAnnotations(app(retry), names)).toEqual([RolloutAnnotation.retry]);
  });

  it("removes ebb's pause note once the rollout is not paused, unless the plan writes the pause itself", () => {
    const note = { [RolloutAnnotation.pausedBy]: 'CanaryStep/web-2' };
    expect(servedAnnotations(app(note, true), names)).toEqual([]);
    expect(clearServed(app(note), names, [])).toEqual([{ kind: 'clearAnnotations', keys: [RolloutAnnotation.pausedBy] }]);
    expect(clearServed(app(note), names, [{ kind: 'pauseRollout', resourceVersion: '1', step: 1, pausedBy: 'CanaryStep/web-2' }])).toEqual([]);
  });
});
