/**
 * Which namespaces a viewer without the board's permission cluster-wide may see on Bull Board. A namespace N is
 * open to a user who holds the board's permission there (`get` on the configured resource in N: a RoleBinding
 * in N grants it) and may `list` Apps in N. Each namespace is reviewed when a job of it is about to be shown
 * (two SubjectAccessReviews), the answer kept for a few seconds per token and namespace (by the token's hash),
 * at most CACHE_SIZE answers; a review counts against the board's review rate limit, and one refused by it
 * leaves the namespace hidden for that answer (not cached).
 */
import { GROUP } from '../api/group.ts';
import type { KubeRest } from '../kube/rest.ts';
import type { BoardAccess } from './board-sar.ts';
import { ReviewRateLimited, type ReviewLimiter } from './board-review-limit.ts';
import { subjectAllowed, type ReviewedUser } from './board-sar.ts';

/** A viewer who may see the jobs of some namespaces, and change none. */
export interface NamespaceViewer {
  readonly kind: 'namespaces';
  /** Which of `namespaces` the viewer may see. Throws when the apiserver cannot say. */
  allowed(namespaces: Iterable<string>, client: string, signal?: AbortSignal): Promise<Set<string>>;
}

/** How long one namespace's answer is kept for one token, and how many answers at most. */
export const NAMESPACE_CACHE_MS = 10_000;
const CACHE_SIZE = 10_000;

export class NamespaceReviews {
  private readonly rest: KubeRest;
  private readonly access: BoardAccess;
  private readonly limiter: ReviewLimiter;
  private readonly now: () => number;
  private readonly cache = new Map<string, { open: boolean; until: number }>();

  constructor(rest: KubeRest, access: BoardAccess, limiter: ReviewLimiter, now: () => number = Date.now) {
    this.rest = rest;
    this.access = access;
    this.limiter = limiter;
    this.now = now;
  }

  /** The viewer `user`, whose token hashes to `tokenKey`. */
  viewer(user: ReviewedUser, tokenKey: string): NamespaceViewer {
    return {
      kind: 'namespaces',
      allowed: async (namespaces, client, signal) => {
        const open = new Set<string>();
        for (const ns of new Set(namespaces)) if (await this.open(user, tokenKey, ns, client, signal)) open.add(ns);
        return open;
      },
    };
  }

  private async open(user: ReviewedUser, tokenKey: string, namespace: string, client: string, signal?: AbortSignal): Promise<boolean> {
    const key = `${tokenKey}/${namespace}`;
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return hit.open;
    try {
      this.limiter.take(client);
    } catch (err) {
      if (err instanceof ReviewRateLimited) return false;
      throw err;
    }
    const { group, resource, name } = this.access;
    const open =
      (await subjectAllowed(this.rest, user, { verb: 'get', group, resource, namespace, name }, signal)) &&
      (await subjectAllowed(this.rest, user, { verb: 'list', group: GROUP, resource: 'apps', namespace, name: undefined }, signal));
    this.cache.delete(key);
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value ?? '');
    this.cache.set(key, { open, until: this.now() + NAMESPACE_CACHE_MS });
    return open;
  }
}
