/**
 * Who may act on an App from the rollouts page: a viewer logged in with a Kubernetes token (the board's
 * `kubernetes` login, audience `ebb-board`) whose user and groups the apiserver allows to `patch` that App (a
 * SubjectAccessReview, as the board reviews reads). The viewer's token cannot be replayed at the apiserver, so
 * the watcher writes the patch itself once the review allowed it. A login that names nobody (a shared board
 * token or password, no login on loopback) may act on nothing.
 *
 * The review that shows the buttons is kept for a few seconds per user and App (the page polls); the review
 * before a write is always made afresh. Actions are rate limited per viewer (ActionLimit).
 */
import type { IncomingMessage } from 'node:http';
import { APP_PLURAL, GROUP } from '../../api/group.ts';
import type { KubeRest } from '../../kube/rest.ts';
import { offeredToken } from '../board-credentials.ts';
import type { KubeReviewer } from '../board-kube-auth.ts';
import { subjectAllowed, type ReviewedUser } from '../board-sar.ts';

export interface ActionAuthority {
  /** The viewer behind a request the board's gate let in, or undefined when the login names nobody. */
  who(req: IncomingMessage): ReviewedUser | undefined;
  /** May `user` patch App `namespace/name`? `fresh`: not from the short cache (before a write). */
  mayPatch(user: ReviewedUser, namespace: string, name: string, fresh: boolean, signal?: AbortSignal): Promise<boolean>;
}

/** How long a review that shows the buttons is kept, and how many at most. */
export const PATCH_REVIEW_CACHE_MS = 10_000;
const CACHE_SIZE = 10_000;

const userKey = (u: ReviewedUser): string => JSON.stringify([u.username, u.uid, [...(u.groups ?? [])].sort()]);

export function kubeActionAuthority(rest: KubeRest, reviewer: KubeReviewer, now: () => number = Date.now): ActionAuthority {
  const cache = new Map<string, { allowed: boolean; until: number }>();
  return {
    who: (req) => {
      const token = offeredToken(req.headers.authorization);
      return token ? reviewer.userOf(token) : undefined;
    },
    mayPatch: async (user, namespace, name, fresh, signal) => {
      const key = `${userKey(user)} ${namespace}/${name}`;
      const hit = cache.get(key);
      if (!fresh && hit && hit.until > now()) return hit.allowed;
      const allowed = await subjectAllowed(rest, user, { verb: 'patch', group: GROUP, resource: APP_PLURAL, namespace, name }, signal);
      cache.delete(key);
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value ?? '');
      cache.set(key, { allowed, until: now() + PATCH_REVIEW_CACHE_MS });
      return allowed;
    },
  };
}

/** Actions one viewer may ask for per window, and the window. */
export const ACTIONS_PER_WINDOW = 10;
export const ACTION_WINDOW_MS = 60_000;

/** A sliding window of actions per viewer (by user name): `take` says whether one more is allowed now. */
export class ActionLimit {
  private readonly times = new Map<string, number[]>();
  private readonly now: () => number;
  private readonly max: number;

  constructor(now: () => number = Date.now, max = ACTIONS_PER_WINDOW) {
    this.now = now;
    this.max = max;
  }

  take(user: string): boolean {
    const t = this.now();
    const recent = (this.times.get(user) ?? []).filter((at) => at > t - ACTION_WINDOW_MS);
    if (recent.length >= this.max) {
      this.times.set(user, recent);
      return false;
    }
    recent.push(t);
    this.times.delete(user);
    if (this.times.size >= CACHE_SIZE) this.times.delete(this.times.keys().next().value ?? '');
    this.times.set(user, recent);
    return true;
  }
}
