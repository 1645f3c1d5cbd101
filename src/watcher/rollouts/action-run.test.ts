import { describe, expect, it } from 'vitest';
import type { App } from '../../api/app.ts';
import { RolloutAnnotation } from '../../api/rollout-abort.ts';
import { KubeError } from '../../kube/errors.ts';
import type { Stored } from '../../kube/types.ts';
import { rolling } from '../../../test/unit/watcher/rollout-actions-fixture.ts';
import { runAction, type AppWriter } from './action-run.ts';

/** An apiserver holding one App, refusing the first `conflicts` patches as the App changed meanwhile. */
function fakeApi(conflicts = 0, app: () => App = () => rolling()) {
  let reads = 0;
  const patches: unknown[] = [];
  const events: Record<string, unknown>[] = [];
  const writer: AppWriter = {
    get: () => Promise.resolve({ ...app(), metadata: { ...app().metadata, resourceVersion: String(++reads) } } as Stored<App>),
    patch: (_ns, _name, patch) => {
      if (conflicts-- > 0) return Promise.reject(new KubeError('Conflict', 409, 'changed'));
      patches.push(patch);
      return Promise.resolve();
    },
    createEvent: (_ns, body) => {
      events.push(body);
      return Promise.resolve();
    },
  };
  return { writer, patches, events };
}

const ask = { namespace: 'shop', name: 'web', op: 'abort' as const, user: 'alice', revision: 'r2' };
const signal = AbortSignal.timeout(5000);

describe('an action from the page', () => {
  it('is planned again on a fresh read after a Conflict, written once, and recorded with who asked', async () => {
    const api = fakeApi(1);
    const out = await runAction({ writer: api.writer, instance: 'i' }, ask, signal);
    expect(out.kind).toBe('done');
    expect(api.patches).toEqual([{ metadata: { resourceVersion: '2', annotations: { [RolloutAnnotation.abort]: 'r2' } } }]);
    expect(api.events).toHaveLength(1);
    expect(api.events[0]).toMatchObject({ reason: 'ActionRequested', note: 'abort requested by alice from the rollouts page' });
  });

  it('writes nothing when the rollout is no longer the one confirmed', async () => {
    const api = fakeApi();
    const out = await runAction({ writer: api.writer, instance: 'i' }, { ...ask, revision: 'r0' }, signal);
    expect(out.kind).toBe('changed');
    expect(api.patches).toEqual([]);
    expect(api.events).toEqual([]);
  });

  it('writes nothing when there is nothing to do (already aborted), and records nothing', async () => {
    const api = fakeApi(0, () => rolling({ abort: true }));
    expect((await runAction({ writer: api.writer, instance: 'i' }, ask, signal)).kind).toBe('skip');
    expect(api.patches).toEqual([]);
    expect(api.events).toEqual([]);
  });

  it('answers gone for an App deleted meanwhile', async () => {
    const writer: AppWriter = { ...fakeApi().writer, get: () => Promise.reject(new KubeError('NotFound', 404, 'gone')) };
    expect(await runAction({ writer, instance: 'i' }, ask, signal)).toEqual({ kind: 'gone' });
  });
});
