import { describe, expect, it } from 'vitest';
import { formatKey, type ObjectKey } from '../queue/names.ts';
import { nodeSource } from './node-source.ts';
import { openPullJobs, pullJobSource } from './pull-job-sources.ts';
import { KnownKeys } from './sources.ts';
import { WarmPools } from './warm-pools.ts';

const node = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels } });
const job: ObjectKey = { kind: 'ImagePullJob', namespace: 'ops', name: 'warm' };
const finished: ObjectKey = { kind: 'ImagePullJob', namespace: 'ops', name: 'done' };
const app: ObjectKey = { kind: 'App', namespace: 'ops', name: 'web' };

describe('ImagePullJob sources', () => {
  it('a Node change enqueues the unfinished ImagePullJobs (never Apps, never finished jobs)', () => {
    const known = new KnownKeys();
    known.record(pullJobSource('ops').name, job, 1, false);
    known.record(pullJobSource('ops').name, finished, 2, true);
    known.record('apps/ops', app, 3, false);
    expect(openPullJobs(known)).toEqual([job]);
    const spec = nodeSource(new WarmPools(), known);
    expect(spec).toMatchObject({ name: 'nodes', tracked: false });
    expect(spec.keyOf(node('a'))).toBeUndefined();
    expect(spec.relatedKeys?.(node('a', { pool: 'gpu' }))).toEqual([job]);
    expect(spec.relatedKeys?.(node('a', { pool: 'gpu' }), 'MODIFIED')).toEqual([]);
    expect(spec.relatedKeys?.(node('b'), 'ADDED')?.map(formatKey)).toEqual([formatKey(job)]);
  });

  it('counts a job as settled once Complete or Failed is True', () => {
    const settled = pullJobSource(undefined).settledOf!;
    const cond = (type: string, status: string) => ({ metadata: { name: 'j' }, status: { conditions: [{ type, status }] } });
    expect(settled(cond('Complete', 'True'))).toBe(true);
    expect(settled(cond('Failed', 'True'))).toBe(true);
    expect(settled(cond('Complete', 'False'))).toBe(false);
    expect(settled({})).toBe(false);
  });
});
