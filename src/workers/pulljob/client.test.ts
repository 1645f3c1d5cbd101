import { describe, expect, it } from 'vitest';
import { KubeError } from '../../kube/errors.ts';
import type { KubeRest } from '../../kube/rest.ts';
import { pullJobApplyBody, restPullJobClient } from './client.ts';
import type { PullJobAction } from './plan.ts';

const request: PullJobAction = {
  kind: 'request',
  node: 'node-a',
  label: { key: 'pulljob.apps.ebb.dev/ops.warm', value: 'abcd1234' },
  images: ['a.io/a:1', 'a.io/b:1'],
  pullSecret: { namespace: 'ops', name: 'regcred' },
};

/** A KubeRest that records applies and answers each with `answer` (an error is thrown). */
function fakeRest(answer?: Error): { rest: KubeRest; applied: { path: string; body: unknown; manager: string; force: boolean }[] } {
  const applied: { path: string; body: unknown; manager: string; force: boolean }[] = [];
  const rest = {
    apply: (ref: { resource: string; name?: string }, body: unknown, manager: string, force: boolean) => {
      applied.push({ path: `${ref.resource}/${ref.name ?? ''}`, body, manager, force });
      return answer ? Promise.reject(answer) : Promise.resolve({});
    },
  } as unknown as KubeRest;
  return { rest, applied };
}

describe('pullJobApplyBody', () => {
  it("requests: the job's label and one entry per image, each naming the pull secret", () => {
    expect(pullJobApplyBody(request)).toEqual({
      apiVersion: 'apps.ebb.dev/v1alpha1',
      kind: 'ImageList',
      metadata: { name: 'node-a', labels: { 'pulljob.apps.ebb.dev/ops.warm': 'abcd1234' } },
      spec: {
        images: [
          { image: 'a.io/a:1', pullSecret: { namespace: 'ops', name: 'regcred' } },
          { image: 'a.io/b:1', pullSecret: { namespace: 'ops', name: 'regcred' } },
        ],
      },
    });
  });

  it('clears: nothing but the name and the uid precondition, so the manager gives up every field it owned', () => {
    expect(pullJobApplyBody({ kind: 'clear', node: 'node-a', uid: 'u1' })).toEqual({
      apiVersion: 'apps.ebb.dev/v1alpha1',
      kind: 'ImageList',
      metadata: { name: 'node-a', uid: 'u1' },
    });
  });
});

describe('restPullJobClient.apply', () => {
  it('applies with the job manager, never forced; without pull secrets enabled the entries name none', async () => {
    const { rest, applied } = fakeRest();
    await restPullJobClient(rest, new AbortController().signal, false).apply(request, 'ebb-pulljob/ops/warm');
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ path: 'imagelists/node-a', manager: 'ebb-pulljob/ops/warm', force: false });
    expect(JSON.stringify(applied[0]?.body)).not.toContain('regcred');
    await restPullJobClient(rest, new AbortController().signal, true).apply(request, 'ebb-pulljob/ops/warm');
    expect(JSON.stringify(applied[1]?.body)).toContain('regcred');
  });

  it('takes a clear that meets no ImageList of that uid as done, and fails a request', async () => {
    const conflict = new KubeError('Conflict', 409, 'uid precondition failed');
    const { rest } = fakeRest(conflict);
    const client = restPullJobClient(rest, new AbortController().signal, true);
    await expect(client.apply({ kind: 'clear', node: 'node-a', uid: 'old' }, 'm')).resolves.toBeUndefined();
    await expect(client.apply(request, 'm')).rejects.toBe(conflict);
  });
});
