import { describe, expect, it } from 'vitest';
import { isPullJobFinished, parsePullJobFieldManager, pullJobFieldManager, pullJobLabelKey } from './pull-job-keys.ts';

describe('pullJobFieldManager', () => {
  it('names the job, and parses back', () => {
    expect(pullJobFieldManager('ops', 'warm.v2')).toBe('ebb-pulljob/ops/warm.v2');
    expect(parsePullJobFieldManager('ebb-pulljob/ops/warm.v2')).toEqual({ namespace: 'ops', name: 'warm.v2' });
  });

  it('is hashed to at most 128 bytes for a long name, and then not parsed', () => {
    const manager = pullJobFieldManager('ops', 'a'.repeat(200));
    expect(manager.length).toBeLessThanOrEqual(128);
    expect(manager).not.toBe(pullJobFieldManager('ops', `${'a'.repeat(199)}b`));
    expect(parsePullJobFieldManager(manager)).toBeUndefined();
  });

  it.each(['ebb-prewarm/ops/web', 'ebb-pulljob/ops', 'ebb-pulljob/Ops/web', 'ebb-pulljob/ops/web/x'])('does not take %s for a job', (m) => {
    expect(parsePullJobFieldManager(m)).toBeUndefined();
  });
});

describe('pullJobLabelKey', () => {
  it('is a valid label key, hashed when long', () => {
    expect(pullJobLabelKey('ops', 'warm')).toBe('pulljob.apps.ebb.dev/ops.warm');
    const long = pullJobLabelKey('ops', 'x'.repeat(100));
    const name = long.split('/')[1] ?? '';
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9][-a-z0-9_.]*[a-z0-9]$/);
  });
});

describe('isPullJobFinished', () => {
  const at = '2026-01-01T00:00:00Z';
  it('is true once Complete or Failed is True', () => {
    expect(isPullJobFinished(undefined)).toBe(false);
    expect(isPullJobFinished({ conditions: [{ type: 'Complete', status: 'False', reason: 'InProgress', message: '', lastTransitionTime: at }] })).toBe(false);
    expect(isPullJobFinished({ conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: '', lastTransitionTime: at }] })).toBe(true);
  });
});
