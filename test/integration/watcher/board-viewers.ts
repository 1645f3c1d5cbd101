/**
 * Board viewers for integration tests: a ServiceAccount granted rules by a Role and RoleBinding in its
 * namespace (or cluster-wide, by a ClusterRole and ClusterRoleBinding), and a token of it minted for the
 * board's audience, as `kubectl create token <sa> --audience ebb-board` mints one.
 */
import { randomBytes } from 'node:crypto';
import { core, resourcePath } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { BOARD_AUDIENCE } from '../../../src/watcher/board-kube-auth.ts';

const rbac = (resource: string, namespace?: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource, namespace });

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** `get` and `list` on Apps: what the board (configured with `apps.apps.ebb.dev`) and the rollouts page need to show. */
export const APP_READ_RULE: PolicyRule = { apiGroups: ['apps.ebb.dev'], resources: ['apps'], verbs: ['get', 'list'] };

/** A token of ServiceAccount `namespace/name` (created here) for `audiences` (the board's by default). */
export async function serviceAccountToken(rest: KubeRest, namespace: string, name: string, audiences = [BOARD_AUDIENCE]): Promise<string> {
  await rest.create(core('serviceaccounts', namespace), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  const req = await rest.request<{ status: { token: string } }>('POST', resourcePath(core('serviceaccounts', namespace, name, 'token')), {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 1200, audiences } },
  });
  return req.status.token;
}

export interface ViewerSpec {
  /** The ServiceAccount's namespace, where a Role grants `rules` unless `clusterWide`. */
  namespace: string;
  name: string;
  rules: PolicyRule[];
  clusterWide?: boolean;
}

/**
 * The viewer `spec` names, with its token; `cleanups` receives what removes the cluster-wide objects (a
 * namespace's Role and RoleBinding go with the namespace).
 */
export async function boardViewer(rest: KubeRest, spec: ViewerSpec, cleanups: (() => Promise<unknown>)[]): Promise<string> {
  const roleName = spec.clusterWide ? `${spec.name}-${randomBytes(3).toString('hex')}` : spec.name;
  const [roleKind, bindingKind, ns] = spec.clusterWide
    ? (['ClusterRole', 'ClusterRoleBinding', undefined] as const)
    : (['Role', 'RoleBinding', spec.namespace] as const);
  const plural = (kind: string): string => `${kind.toLowerCase()}s`;
  await rest.create(rbac(plural(roleKind), ns), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: roleKind,
    metadata: { name: roleName },
    rules: spec.rules,
  });
  await rest.create(rbac(plural(bindingKind), ns), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: bindingKind,
    metadata: { name: roleName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects: [{ kind: 'ServiceAccount', name: spec.name, namespace: spec.namespace }],
  });
  if (spec.clusterWide)
    cleanups.push(
      () => rest.delete({ ...rbac(plural(bindingKind)), name: roleName }),
      () => rest.delete({ ...rbac(plural(roleKind)), name: roleName }),
    );
  return serviceAccountToken(rest, spec.namespace, spec.name);
}
