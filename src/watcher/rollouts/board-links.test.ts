import { describe, expect, it } from 'vitest';
import { reconcileJobId } from '../../queue/job-id.ts';
import type { ObjectKey } from '../../queue/names.ts';
import { appPageLink } from './board-links.ts';

describe('links from Bull Board jobs to the rollouts page', () => {
  const link = appPageLink('/rollouts');
  const job = (key: ObjectKey) => ({ id: reconcileJobId(key), data: key });

  it("links an App's reconcile job to the App's page", () => {
    expect(link(job({ kind: 'App', namespace: 'team-a', name: 'web' }))).toEqual({ href: '/rollouts/team-a/web', displayText: 'Rollout of team-a/web' });
  });

  it('links no other job, nor one whose id and payload disagree', () => {
    expect(link(job({ kind: 'ImagePullJob', namespace: 'team-a', name: 'pull' }))).toBeUndefined();
    expect(link(job({ kind: 'ImageList', namespace: '', name: 'node-1' }))).toBeUndefined();
    const forged = { id: reconcileJobId({ kind: 'App', namespace: 'team-a', name: 'web' }), data: { kind: 'App', namespace: 'team-b', name: 'web' } };
    expect(link(forged)).toBeUndefined();
    expect(link({ id: 'timer:1', data: {} })).toBeUndefined();
  });
});
