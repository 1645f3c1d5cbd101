import { describe, expect, it } from 'vitest';
import { MAX_IMAGES, MAX_MESSAGE, summarize } from './summary.ts';

type Cond = { type: string; status: string; reason?: string; message?: string };

function app(name: string, status: Record<string, unknown> = {}, conditions: Cond[] = [], spec: Record<string, unknown> = {}) {
  return {
    metadata: { namespace: 'team-a', name },
    spec: { replicas: 3, template: { spec: { containers: [{ name: 'c', image: 'web:v2' }] } }, ...spec },
    status: { replicas: 3, updatedReplicas: 3, readyReplicas: 3, currentRevision: 'web-1', updateRevision: 'web-1', ...status, conditions },
  };
}

describe('summarize', () => {
  it('puts an App in the state that needs attention first', () => {
    const rolling = { currentRevision: 'web-1', updateRevision: 'web-2', updatedReplicas: 1 };
    expect(summarize(app('a'))?.state).toBe('complete');
    expect(summarize(app('a', rolling))?.state).toBe('rolling');
    expect(summarize(app('a', rolling, [{ type: 'Paused', status: 'True', reason: 'CanaryPause', message: 'step 1' }]))?.state).toBe('paused');
    expect(summarize(app('a', rolling, [{ type: 'RolloutHeld', status: 'True', message: 'admission refuses' }]))?.state).toBe('held');
    expect(summarize(app('a', rolling, [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }]))?.state).toBe('held');
    expect(summarize(app('a', rolling, [{ type: 'Quarantined', status: 'True' }]))?.state).toBe('quarantined');
    const both = [
      { type: 'Paused', status: 'True' },
      { type: 'Aborted', status: 'True', message: 'check error-rate failed' },
    ];
    const aborted = summarize(app('a', rolling, both));
    expect(aborted?.state).toBe('aborted');
    expect(aborted?.message).toBe('check error-rate failed');
    expect(summarize(app('a', rolling, [{ type: 'Aborted', status: 'False' }]))?.state).toBe('rolling');
  });

  it('keeps tenant text bounded: messages and images cut, at most a few images', () => {
    const containers = Array.from({ length: 10 }, (_, i) => ({ name: `c${i}`, image: `${'x'.repeat(1000)}:${i}` }));
    const s = summarize(app('a', {}, [{ type: 'RolloutHeld', status: 'True', message: 'm'.repeat(100_000) }], { template: { spec: { containers } } }));
    expect(s?.message.length).toBe(MAX_MESSAGE);
    expect(s?.images).toHaveLength(MAX_IMAGES);
    expect(s?.moreImages).toBe(10 - MAX_IMAGES);
    expect(Math.max(...(s?.images ?? []).map((i) => i.length))).toBeLessThanOrEqual(200);
    expect(JSON.stringify(s).length).toBeLessThan(2_000);
  });

  it('reads the canary step against the steps of the spec, and survives odd status', () => {
    const spec = { updateStrategy: { rollingUpdate: { canary: { steps: [{ replicas: 1 }, { pause: {} }, { replicas: '100%' }] } } } };
    expect(summarize(app('a', { canary: { step: 1 } }, [], spec))?.canary).toEqual({ step: 1, steps: 3 });
    expect(summarize(app('a', { canary: { step: 99 }, replicas: 'x', conditions: 'no' }, [], spec))?.canary).toEqual({ step: 3, steps: 3 });
    expect(summarize({ metadata: { name: 'no-namespace' } })).toBeUndefined();
  });
});
