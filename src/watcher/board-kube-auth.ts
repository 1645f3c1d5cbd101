/**
 * Bull Board access by Kubernetes identity, as kube-rbac-proxy grants it: the bearer token a request carries
 * is checked with a TokenReview (who is this?), and that user with a SubjectAccessReview (may they `get` the
 * configured resource?). A token `kubectl create token` issued, or any token the apiserver accepts, opens
 * the board when RBAC allows its user that one `get`. The watcher's own identity needs `create` on
 * tokenreviews and subjectaccessreviews (the `system:auth-delegator` ClusterRole).
 *
 * Answers are kept for a few seconds per token (by its hash, never the token itself), so the page's many
 * requests cost one review; a revoked token or a removed RoleBinding takes effect within that time.
 */
import { createHash } from 'node:crypto';
import type { KubeRest } from '../kube/rest.ts';

/** What a user must be allowed to `get` to open the board. */
export interface BoardAccess {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly resource: string;
  /** undefined: cluster-wide (every namespace, for a namespaced resource). */
  readonly namespace: string | undefined;
  /** undefined: any object of the resource. */
  readonly name: string | undefined;
}

/** Answers whether a bearer token opens the board; throws when the apiserver cannot say (not cached). */
export type TokenReviewer = (token: string, signal?: AbortSignal) => Promise<boolean>;

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

/** How long an answer is kept, and how many tokens at most. */
export const REVIEW_CACHE_MS = 10_000;
const REVIEW_CACHE_SIZE = 1_000;

const reviewRef = (group: string, resource: string): { group: string; version: string; resource: string } => ({ group, version: 'v1', resource });

/** `resource[.group]` (e.g. `apps.apps.ebb.dev`, `services`) and the optional namespace and name, as settings give them. */
export function boardAccessOf(resourceDotGroup: string, namespace: string | undefined, name: string | undefined): BoardAccess {
  const dot = resourceDotGroup.indexOf('.');
  const resource = dot < 0 ? resourceDotGroup : resourceDotGroup.slice(0, dot);
  const group = dot < 0 ? '' : resourceDotGroup.slice(dot + 1);
  return { group, resource, namespace, name };
}

/** One review against the apiserver, without a cache. */
async function review(rest: KubeRest, access: BoardAccess, token: string, signal?: AbortSignal): Promise<boolean> {
  const tr = await rest.create<{ status?: TokenReviewStatus }>(
    reviewRef('authentication.k8s.io', 'tokenreviews'),
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    {},
    signal,
  );
  const user = tr.status?.user;
  if (tr.status?.authenticated !== true || !user?.username) return false;
  const sar = await rest.create<{ status?: { allowed?: boolean; denied?: boolean } }>(
    reviewRef('authorization.k8s.io', 'subjectaccessreviews'),
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        resourceAttributes: { verb: 'get', group: access.group, resource: access.resource, namespace: access.namespace, name: access.name },
      },
    },
    {},
    signal,
  );
  return sar.status?.allowed === true && sar.status.denied !== true;
}

/** A reviewer with a short cache of answers, keyed by the token's SHA-256. */
export function kubeTokenReviewer(rest: KubeRest, access: BoardAccess, now: () => number = Date.now): TokenReviewer {
  const cache = new Map<string, { allowed: boolean; until: number }>();
  return async (token, signal) => {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.allowed;
    const allowed = await review(rest, access, token, signal);
    cache.delete(key);
    if (cache.size >= REVIEW_CACHE_SIZE) cache.delete(cache.keys().next().value ?? '');
    cache.set(key, { allowed, until: now() + REVIEW_CACHE_MS });
    return allowed;
  };
}
