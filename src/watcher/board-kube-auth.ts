/**
 * Bull Board access by Kubernetes identity, as kube-rbac-proxy grants it: the bearer token a request carries
 * is checked with a TokenReview for the audience `ebb-board` (who is this, and was the token minted for the
 * board?), and that user with SubjectAccessReviews: `get` on the configured resource opens a read-only board,
 * `update` on it too allows retrying, removing and promoting jobs (when the board is not read-only). A token
 * minted by `kubectl create token <sa> --audience ebb-board` opens it; a token for any other audience (the
 * apiserver's own, which every pod's ServiceAccount token carries) does not, so a token leaked from a pod or
 * sent to another service cannot be replayed here. The watcher's own identity needs `create` on tokenreviews
 * and subjectaccessreviews (the `system:auth-delegator` ClusterRole).
 *
 * When the configured permission is cluster-wide (no namespace set), a user who lacks it cluster-wide is not
 * refused but limited: a NamespaceViewer, who sees only the jobs of namespaces where a RoleBinding grants the
 * permission and Apps may be listed, and changes nothing (board-namespaces.ts).
 *
 * Answers are kept for a few seconds per token (by its hash, never the token itself), so the page's many
 * requests cost one review; a revoked token or a removed RoleBinding takes effect within that time. Reviews
 * themselves are rate-limited per client address and overall (board-review-limit.ts).
 */
import { createHash } from 'node:crypto';
import type { KubeRest } from '../kube/rest.ts';
import { NamespaceReviews, type NamespaceViewer } from './board-namespaces.ts';
import { ReviewLimiter } from './board-review-limit.ts';
import { reviewRef, subjectAllowed, type BoardAccess, type ReviewedUser } from './board-sar.ts';

export { boardAccessOf, type BoardAccess, type ReviewedUser } from './board-sar.ts';

/** The audience a token must be minted for to open the board. */
export const BOARD_AUDIENCE = 'ebb-board';

/** What a request may do on the board: nothing, look, or also retry, remove and promote jobs. */
export type BoardGrant = 'none' | 'read' | 'write';

/** Who a request is: a grant over every namespace, or a viewer limited to some. */
export type BoardViewer = BoardGrant | NamespaceViewer;

/**
 * What a bearer token may do on the board, for a request from `client` (its address); throws when the
 * apiserver cannot say (not cached), and ReviewRateLimited when a review is over the limits.
 */
export type TokenReviewer = (token: string, client: string, signal?: AbortSignal) => Promise<BoardViewer>;

interface TokenReviewStatus {
  authenticated?: boolean;
  audiences?: string[];
  user?: ReviewedUser;
}

/** How long an answer is kept, and how many tokens at most. */
export const REVIEW_CACHE_MS = 10_000;
const REVIEW_CACHE_SIZE = 1_000;

/** May `user` do `verb` on the configured resource? One SubjectAccessReview. */
const allowed = (rest: KubeRest, access: BoardAccess, user: ReviewedUser, verb: string, signal?: AbortSignal): Promise<boolean> =>
  subjectAllowed(rest, user, { verb, group: access.group, resource: access.resource, namespace: access.namespace, name: access.name }, signal);

/**
 * One review against the apiserver, without a cache. The TokenReview names the board's audience, and its
 * answer must name it back: an authenticator that does not check audiences (a static token file) answers
 * without them, and such a token is refused too. A user without the permission cluster-wide, when it is configured
 * cluster-wide, gets a NamespaceViewer.
 */
async function reviewToken(
  rest: KubeRest,
  access: BoardAccess,
  opts: { writable: boolean; namespaces: NamespaceReviews; tokenKey: string },
  token: string,
  signal?: AbortSignal,
): Promise<{ grant: BoardViewer; user?: ReviewedUser }> {
  const tr = await rest.create<{ status?: TokenReviewStatus }>(
    reviewRef('authentication.k8s.io', 'tokenreviews'),
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [BOARD_AUDIENCE] } },
    {},
    signal,
  );
  const user = tr.status?.user;
  if (tr.status?.authenticated !== true || !user?.username || tr.status.audiences?.includes(BOARD_AUDIENCE) !== true) return { grant: 'none' };
  if (!(await allowed(rest, access, user, 'get', signal)))
    return access.namespace === undefined ? { grant: opts.namespaces.viewer(user, opts.tokenKey), user } : { grant: 'none' };
  return { grant: opts.writable && (await allowed(rest, access, user, 'update', signal)) ? 'write' : 'read', user };
}

export interface ReviewerOptions {
  /** The board allows changes at all (EBB_BOARD_READ_ONLY=false): only then is `update` reviewed. */
  writable: boolean;
  limiter?: ReviewLimiter;
  now?: () => number;
}

/** The reviewer, and who a token it let in belongs to (the rollouts page's actions name and review that user). */
export interface KubeReviewer {
  review: TokenReviewer;
  /** The user the TokenReview named for `token`, while its answer is kept; undefined for a token not let in. */
  userOf(token: string): ReviewedUser | undefined;
}

const tokenKeyOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A reviewer with a short cache of answers, keyed by the token's SHA-256, and a rate limit on its reviews. */
export function kubeReviewer(rest: KubeRest, access: BoardAccess, opts: ReviewerOptions): KubeReviewer {
  const now = opts.now ?? Date.now;
  const limiter = opts.limiter ?? new ReviewLimiter();
  const namespaces = new NamespaceReviews(rest, access, limiter, now);
  const cache = new Map<string, { grant: BoardViewer; user: ReviewedUser | undefined; until: number }>();
  const review: TokenReviewer = async (token, client, signal) => {
    const key = tokenKeyOf(token);
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.grant;
    limiter.take(client);
    const { grant, user } = await reviewToken(rest, access, { writable: opts.writable, namespaces, tokenKey: key }, token, signal);
    cache.delete(key);
    if (cache.size >= REVIEW_CACHE_SIZE) cache.delete(cache.keys().next().value ?? '');
    cache.set(key, { grant, user, until: now() + REVIEW_CACHE_MS });
    return grant;
  };
  return {
    review,
    userOf: (token) => {
      const hit = cache.get(tokenKeyOf(token));
      return hit && hit.until > now() && hit.grant !== 'none' ? hit.user : undefined;
    },
  };
}

/** kubeReviewer's review alone. */
export const kubeTokenReviewer = (rest: KubeRest, access: BoardAccess, opts: ReviewerOptions): TokenReviewer => kubeReviewer(rest, access, opts).review;
