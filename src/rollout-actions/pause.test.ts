import { describe, expect, it } from 'vitest';
import type { App } from '../api/app.ts';
import { RolloutAnnotation } from '../api/rollout-abort.ts';
import { planPause } from './pause.ts';

const app = (paused: boolean, annotations: Record<string, string> = {}): App =>
  ({
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop', resourceVersion: '7', annotations },
    spec: { updateStrategy: { rollingUpdate: { paused } } },
  }) as unknown as App;

describe('planPause', () => {
  it('pauses a running rollout with a spec write alone', () => {
    expect(planPause(app(false), true)).toEqual({
      kind: 'patch',
      patch: { spec: { updateStrategy: { rollingUpdate: { paused: true } } } },
      message: 'app.apps.ebb.dev/web paused',
    });
  });

  it('skips a pause already made, and a resume of a running rollout', () => {
    expect(planPause(app(true), true).kind).toBe('skip');
    expect(planPause(app(false), false).kind).toBe('skip');
  });

  it("takes over ebb's own pause: its note removed, guarded by the resourceVersion", () => {
    const plan = planPause(app(true, { [RolloutAnnotation.pausedBy]: 'CanaryStep' }), true);
    expect(plan).toMatchObject({
      kind: 'patch',
      patch: { metadata: { resourceVersion: '7', annotations: { [RolloutAnnotation.pausedBy]: null } } },
    });
    expect(plan.message).toContain("ebb's own pause taken over");
  });
});
