/**
 * Bull Board behind Kubernetes authentication, against the sandbox's apiserver: a ServiceAccount token issued
 * by the TokenRequest API for the `ebb-board` audience (what `kubectl create token --audience ebb-board` does)
 * opens the board when RBAC lets its user `get` the configured object, read-only unless it may `update` it
 * too; a token for the apiserver's own audience, one the apiserver does not know, or one of a user without
 * that `get` is refused; reviews beyond the rate limits are refused without asking the apiserver. The reviewer
 * is checked on its own first, then through a real `ebb watcher`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { core, resourcePath } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { BOARD_AUDIENCE, kubeTokenReviewer, type BoardAccess } from '../../../src/watcher/board-kube-auth.ts';
import { ReviewLimiter, ReviewRateLimited } from '../../../src/watcher/board-review-limit.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const rbac = (resource: string, namespace: string): { group: string; version: string; resource: string; namespace: string } => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespace,
});

/** A ServiceAccount (made once) and a token for it, as `kubectl create token [--audience …]` issues one. */
async function serviceAccountToken(rest: KubeRest, namespace: string, name: string, audiences?: string[]): Promise<string> {
  await rest.create(core('serviceaccounts', namespace), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }).catch(() => undefined);
  const req = await rest.request<{ status: { token: string } }>('POST', resourcePath(core('serviceaccounts', namespace, name, 'token')), {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600, ...(audiences ? { audiences } : {}) } },
  });
  return req.status.token;
}

/** A Role on the one ConfigMap with `verbs`, bound to the ServiceAccount `sa`. */
async function grant(rest: KubeRest, namespace: string, object: string, sa: string, verbs: string[]): Promise<void> {
  await rest.create(rbac('roles', namespace), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: `board-${sa}` },
    rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [object], verbs }],
  });
  await rest.create(rbac('rolebindings', namespace), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `board-${sa}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `board-${sa}` },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace }],
  });
}

describe('Bull Board with Kubernetes authentication', () => {
  const procs: EbbProcess[] = [];
  let namespace = '';
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    if (namespace) await deleteNamespace(sandbox().rest, namespace).catch(() => undefined);
  });

  it('opens to an ebb-board token whose user may get the object (read-only) or update it (changes), to no other, within a rate limit', async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    namespace = await freshNamespace('board-auth');
    const object = `board-${randomBytes(3).toString('hex')}`;
    await grant(rest, namespace, object, 'viewer', ['get']);
    await grant(rest, namespace, object, 'editor', ['get', 'update']);
    const viewer = await serviceAccountToken(rest, namespace, 'viewer', [BOARD_AUDIENCE]);
    const editor = await serviceAccountToken(rest, namespace, 'editor', [BOARD_AUDIENCE]);
    // The token every pod of the ServiceAccount carries: the apiserver's own audience.
    const viewerForApiserver = await serviceAccountToken(rest, namespace, 'viewer');
    const stranger = await serviceAccountToken(rest, namespace, 'stranger', [BOARD_AUDIENCE]);
    const forged = `${viewer.slice(0, -8)}AAAAAAAA`;

    // The reviewer alone: TokenReview for the board's audience, then SubjectAccessReviews on the one ConfigMap.
    const access: BoardAccess = { group: '', resource: 'configmaps', namespace, name: object };
    const grantNow = (token: string, a = access, writable = true) => kubeTokenReviewer(rest, a, { writable })(token, 'test');
    await waitFor(async () => ((await grantNow(editor)) === 'write' ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'the RoleBindings in effect',
    });
    expect(await grantNow(viewer)).toBe('read');
    expect(await grantNow(editor, access, false)).toBe('read');
    expect(await grantNow(viewerForApiserver)).toBe('none');
    expect(await grantNow(stranger)).toBe('none');
    expect(await grantNow(forged)).toBe('none');
    expect(await grantNow(viewer, { ...access, name: 'another' })).toBe('none');
    expect(await grantNow(viewer, { ...access, namespace: 'default' })).toBe('none');

    // Reviews are rate-limited per client and overall; a cached answer costs none.
    const limited = kubeTokenReviewer(rest, access, {
      writable: true,
      limiter: new ReviewLimiter({ perSecond: 0.001, burst: 2 }, { perSecond: 0.001, burst: 3 }),
    });
    const made = (n: number): string => `made-up-${n}-${randomBytes(8).toString('hex')}`;
    expect(await limited(viewer, '10.0.0.1')).toBe('read');
    expect(await limited(made(1), '10.0.0.1')).toBe('none');
    await expect(limited(made(2), '10.0.0.1')).rejects.toBeInstanceOf(ReviewRateLimited);
    expect(await limited(viewer, '10.0.0.1')).toBe('read');
    expect(await limited(made(3), '10.0.0.2')).toBe('none');
    await expect(limited(made(4), '10.0.0.3')).rejects.toBeInstanceOf(ReviewRateLimited);

    // Through the watcher, listening on every address: Kubernetes authentication is a credential.
    const watcher = spawnEbb(
      'watcher',
      ebbEnv(
        { kubeconfig, redisUrl, prefix: uniquePrefix('board-auth'), namespaces: [namespace] },
        {
          EBB_BOARD: 'true',
          EBB_BOARD_READ_ONLY: 'false',
          EBB_HTTP_ADDRESS: '0.0.0.0',
          EBB_SCALER: 'false',
          EBB_BOARD_KUBE_AUTH_RESOURCE: 'configmaps',
          EBB_BOARD_KUBE_AUTH_NAMESPACE: namespace,
          EBB_BOARD_KUBE_AUTH_NAME: object,
        },
      ),
    );
    procs.push(watcher);
    const origin = `http://127.0.0.1:${await watcher.httpPort()}`;
    const board = `${origin}/board`;
    const get = async (authorization?: string): Promise<number> =>
      (await fetch(`${board}/api/queues`, { headers: authorization ? { authorization } : {}, signal: AbortSignal.timeout(10_000) })).status;
    expect(await get(`Bearer ${viewer}`)).toBe(200);
    expect(await get(`Basic ${Buffer.from(`anyone:${viewer}`).toString('base64')}`)).toBe(200);
    expect(await get(`Bearer ${viewerForApiserver}`)).toBe(401);
    expect(await get(`Bearer ${stranger}`)).toBe(401);
    expect(await get(`Bearer ${forged}`)).toBe(401);
    expect(await get()).toBe(401);
    // Changes: only the user who may update the object.
    const clean = async (token: string): Promise<number> =>
      (
        await fetch(`${board}/api/queues/reconcile/clean/completed`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, origin },
          signal: AbortSignal.timeout(10_000),
        })
      ).status;
    expect(await clean(viewer)).toBe(403);
    expect(await clean(editor)).toBe(200);
  });
});
