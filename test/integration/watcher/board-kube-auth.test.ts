/**
 * Bull Board behind Kubernetes authentication, against the sandbox's apiserver: a ServiceAccount token issued
 * by the TokenRequest API (what `kubectl create token` does) opens the board when RBAC lets its user `get`
 * the configured object, and not when it does not; a token the apiserver does not know is refused. The
 * reviewer is checked on its own first, then through a real `ebb watcher`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { core, resourcePath } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { kubeTokenReviewer, type BoardAccess } from '../../../src/watcher/board-kube-auth.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const rbac = (resource: string, namespace: string): { group: string; version: string; resource: string; namespace: string } => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespace,
});

/** A ServiceAccount and a token for it, as `kubectl create token` issues one. */
async function serviceAccountToken(rest: KubeRest, namespace: string, name: string): Promise<string> {
  await rest.create(core('serviceaccounts', namespace), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  const req = await rest.request<{ status: { token: string } }>('POST', resourcePath(core('serviceaccounts', namespace, name, 'token')), {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
  });
  return req.status.token;
}

describe('Bull Board with Kubernetes authentication', () => {
  const procs: EbbProcess[] = [];
  let namespace = '';
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    if (namespace) await deleteNamespace(sandbox().rest, namespace).catch(() => undefined);
  });

  it('opens to a token whose user may get the configured object, and to no other', async () => {
    const { rest, kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    namespace = await freshNamespace('board-auth');
    const object = `board-${randomBytes(3).toString('hex')}`;
    await rest.create(rbac('roles', namespace), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'board-viewer' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [object], verbs: ['get'] }],
    });
    await rest.create(rbac('rolebindings', namespace), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'board-viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'board-viewer' },
      subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace }],
    });
    const viewer = await serviceAccountToken(rest, namespace, 'viewer');
    const stranger = await serviceAccountToken(rest, namespace, 'stranger');
    const forged = `${viewer.slice(0, -8)}AAAAAAAA`;

    // The reviewer alone: TokenReview, then SubjectAccessReview of `get` on the one ConfigMap.
    const access: BoardAccess = { group: '', resource: 'configmaps', namespace, name: object };
    const allowedNow = (token: string): Promise<boolean> => kubeTokenReviewer(rest, access)(token);
    await waitFor(async () => ((await allowedNow(viewer)) ? true : undefined), { timeoutMs: 30_000, intervalMs: 250, what: 'the RoleBinding in effect' });
    expect(await allowedNow(stranger)).toBe(false);
    expect(await allowedNow(forged)).toBe(false);
    expect(await kubeTokenReviewer(rest, { ...access, name: 'another' })(viewer)).toBe(false);
    expect(await kubeTokenReviewer(rest, { ...access, namespace: 'default' })(viewer)).toBe(false);

    // Through the watcher, listening on every address: Kubernetes authentication is a credential.
    const watcher = spawnEbb(
      'watcher',
      ebbEnv(
        { kubeconfig, redisUrl, prefix: uniquePrefix('board-auth'), namespaces: [namespace] },
        {
          EBB_BOARD: 'true',
          EBB_HTTP_ADDRESS: '0.0.0.0',
          EBB_SCALER: 'false',
          EBB_BOARD_KUBE_AUTH_RESOURCE: 'configmaps',
          EBB_BOARD_KUBE_AUTH_NAMESPACE: namespace,
          EBB_BOARD_KUBE_AUTH_NAME: object,
        },
      ),
    );
    procs.push(watcher);
    const board = `http://127.0.0.1:${await watcher.httpPort()}/board`;
    const get = async (authorization?: string): Promise<number> =>
      (await fetch(`${board}/api/queues`, { headers: authorization ? { authorization } : {}, signal: AbortSignal.timeout(10_000) })).status;
    expect(await get(`Bearer ${viewer}`)).toBe(200);
    expect(await get(`Basic ${Buffer.from(`anyone:${viewer}`).toString('base64')}`)).toBe(200);
    expect(await get(`Bearer ${stranger}`)).toBe(401);
    expect(await get(`Bearer ${forged}`)).toBe(401);
    expect(await get()).toBe(401);
  });
});
