/**
 * The worker's ImageList reconcile with pull secrets enabled, on the sandbox apiserver: it copies the Secret an
 * entry names into the pull-secret namespace (credentials and type only, owned by the ImageList), copies it
 * again when the Secret changes, removes the copy when no entry names it, and the garbage collector removes
 * the copies with the ImageList. Without a pull-secret namespace it makes none.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import { copyLabelValue, PULL_SECRET_COPY_LABEL, pullSecretCopyName } from '../../../src/api/pull-secret-copy.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { ReconcileContext } from '../../../src/workers/types.ts';
import { imageListReconciler } from '../../../src/workers/imagelist/reconcile.ts';
import { createPullSecret, freshNamespace, sandbox } from '../support.ts';
import { deleteList } from './helpers.ts';

interface SecretView {
  metadata: { name: string; annotations?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string }[] };
  type: string;
  data: Record<string, string>;
}

describe('pull-secret copies made by the ImageList reconcile', () => {
  const { rest } = sandbox();
  const node = `it-copies-${randomBytes(3).toString('hex')}`;
  const key = { kind: 'ImageList' as const, namespace: '', name: node };
  const ctx = (): ReconcileContext => ({ rest, log: createLogger('copies', 'warn'), signal: AbortSignal.timeout(30_000), now: () => new Date() });
  let tenant = '';
  let copies = '';
  let listUid = '';

  const copiesOf = async (): Promise<SecretView[]> =>
    (await rest.list<SecretView>(core('secrets', copies), { labelSelector: `${PULL_SECRET_COPY_LABEL}=${copyLabelValue(node)}` })).items;
  const entries = (pullSecret?: { namespace: string; name: string }): unknown => ({
    spec: { images: [{ image: 'registry.example.com/private/app:1', ...(pullSecret ? { pullSecret } : {}) }] },
  });

  beforeAll(async () => {
    tenant = await freshNamespace('tenant');
    copies = await freshNamespace('copies');
    await createPullSecret(tenant, 'regcred', { 'registry.example.com': { username: 'robot', password: 'first' } });
    const list = await rest.create<{ metadata: { uid: string } }>(imageListRef(), {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: node },
      ...(entries({ namespace: tenant, name: 'regcred' }) as object),
    });
    listUid = list.metadata.uid;
  });

  afterAll(async () => {
    await deleteList(node).catch(() => undefined);
    for (const ns of [tenant, copies]) if (ns) await rest.delete(core('namespaces', undefined, ns)).catch(() => undefined);
  });

  it('makes no copy without a pull-secret namespace', async () => {
    await imageListReconciler(undefined)(key, ctx());
    expect(await copiesOf()).toEqual([]);
  });

  it('copies the named Secret: type and credentials only, owned by the ImageList, under the derived name', async () => {
    await imageListReconciler(copies)(key, ctx());
    const [copy, ...more] = await copiesOf();
    expect(more).toEqual([]);
    const source = await rest.get<SecretView>(core('secrets', tenant, 'regcred'));
    expect(copy).toMatchObject({
      metadata: {
        name: pullSecretCopyName(node, { namespace: tenant, name: 'regcred' }),
        annotations: { 'apps.ebb.dev/image-list': node, 'apps.ebb.dev/pull-secret': `${tenant}/regcred` },
        ownerReferences: [{ kind: 'ImageList', name: node, uid: listUid }],
      },
      type: 'kubernetes.io/dockerconfigjson',
      data: source.data,
    });
  });

  it('copies again when the Secret changes, and removes the copy when no entry names it', async () => {
    await rest.delete(core('secrets', tenant, 'regcred'));
    await createPullSecret(tenant, 'regcred', { 'registry.example.com': { username: 'robot', password: 'second' } });
    await imageListReconciler(copies)(key, ctx());
    const source = await rest.get<SecretView>(core('secrets', tenant, 'regcred'));
    expect((await copiesOf()).map((c) => c.data)).toEqual([source.data]);

    await rest.patch(imageListRef(node), entries(), PatchType.merge);
    await imageListReconciler(copies)(key, ctx());
    expect(await copiesOf()).toEqual([]);
  });

  it('leaves the copies to the garbage collector when the ImageList is deleted', async () => {
    await rest.patch(imageListRef(node), entries({ namespace: tenant, name: 'regcred' }), PatchType.merge);
    await imageListReconciler(copies)(key, ctx());
    expect(await copiesOf()).toHaveLength(1);
    await deleteList(node);
    await waitFor(async () => ((await copiesOf()).length === 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 250, what: 'copies collected' });
  });
});
