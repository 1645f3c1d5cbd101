/**
 * The real garbage collector of kube-controller-manager removes what an App owns when the App is deleted;
 * ebb relies on it (controller ownerReferences on pods and, per retention policy, on PVCs).
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/common/wait.ts';
import { appRef } from '../../src/api/group.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core } from '../../src/kube/paths.ts';
import { freshNamespace, sandbox } from './support.ts';
import type { KubeObject, Stored } from '../../src/kube/types.ts';

type Meta = Stored<KubeObject>;

const app = (name: string): Record<string, unknown> => ({
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'App',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
  },
});

async function gone(get: () => Promise<unknown>): Promise<boolean | undefined> {
  try {
    await get();
    return undefined;
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return true;
    throw err;
  }
}

describe('garbage collection of App dependents', () => {
  it('deletes the pods an App controls when the App is deleted, and leaves unowned pods alone', async () => {
    const { rest } = sandbox();
    const ns = await freshNamespace('gc');
    const owner = await rest.create<Meta>(appRef(ns), app('web'));
    const ownerRef = { apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'App', name: 'web', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
    const pod = (name: string, owned: boolean): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'web' }, ...(owned ? { ownerReferences: [ownerRef] } : {}) },
      spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
    });
    await rest.create(core('pods', ns), pod('web-0', true));
    await rest.create(core('pods', ns), pod('bystander', false));

    await rest.delete(appRef(ns, 'web'));

    await waitFor(() => gone(() => rest.get(core('pods', ns, 'web-0'))), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'owned pod deleted by the garbage collector',
    });
    const survivor = await rest.get<Meta>(core('pods', ns, 'bystander'));
    expect(survivor.metadata.name).toBe('bystander');
    expect(await gone(() => rest.get(appRef(ns, 'web')))).toBe(true);
  });
});
