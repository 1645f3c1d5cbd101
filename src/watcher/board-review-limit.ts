/**
 * A bound on the TokenReviews (and SubjectAccessReviews) Bull Board asks the apiserver for: answers are cached
 * per token, but every new token costs a review, so anyone who reaches the board could otherwise make the
 * watcher flood the apiserver with made-up tokens. Two token buckets: one per client address, one for all
 * clients together. A request that would need a review beyond either is refused (429) without one.
 */

export interface Rate {
  /** Reviews added back per second. */
  readonly perSecond: number;
  /** Reviews that may be spent at once. */
  readonly burst: number;
}

/** One address: a page's many requests cost one review (cached); a few tokens a second is plenty. */
export const PER_CLIENT: Rate = { perSecond: 1, burst: 10 };
/** Every address together. */
export const OVERALL: Rate = { perSecond: 10, burst: 50 };
/** Addresses remembered at most; the one seen least recently is forgotten first. */
const MAX_CLIENTS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Thrown instead of a review the limiter refused; `retryAfterS` for the Retry-After header. */
export class ReviewRateLimited extends Error {
  override readonly name = 'ReviewRateLimited';
  readonly code = 'ReviewRateLimited';
  readonly retryAfterS: number;
  constructor(retryAfterS: number) {
    super('too many token reviews; try again later');
    this.retryAfterS = retryAfterS;
  }
}

export class ReviewLimiter {
  private readonly clients = new Map<string, Bucket>();
  private readonly overall: Bucket;
  private readonly perClient: Rate;
  private readonly total: Rate;
  private readonly now: () => number;

  constructor(perClient: Rate = PER_CLIENT, overall: Rate = OVERALL, now: () => number = Date.now) {
    this.perClient = perClient;
    this.total = overall;
    this.now = now;
    this.overall = { tokens: overall.burst, at: now() };
  }

  /** Spends one review for `client` when both buckets have one; otherwise throws ReviewRateLimited. */
  take(client: string): void {
    const now = this.now();
    const mine = this.clients.get(client) ?? { tokens: this.perClient.burst, at: now };
    refill(mine, this.perClient, now);
    refill(this.overall, this.total, now);
    if (mine.tokens < 1 || this.overall.tokens < 1) {
      const wait = Math.max(waitS(mine, this.perClient), waitS(this.overall, this.total));
      this.remember(client, mine);
      throw new ReviewRateLimited(wait);
    }
    mine.tokens -= 1;
    this.overall.tokens -= 1;
    this.remember(client, mine);
  }

  private remember(client: string, bucket: Bucket): void {
    this.clients.delete(client);
    if (this.clients.size >= MAX_CLIENTS) this.forgetOne();
    this.clients.set(client, bucket);
  }

  /** The oldest address (least recently seen). */
  private forgetOne(): void {
    const oldest = this.clients.keys().next();
    if (!oldest.done) this.clients.delete(oldest.value);
  }
}

function refill(b: Bucket, rate: Rate, now: number): void {
  b.tokens = Math.min(rate.burst, b.tokens + ((now - b.at) / 1000) * rate.perSecond);
  b.at = now;
}

/** Whole seconds until the bucket has one review again (at least 1). */
function waitS(b: Bucket, rate: Rate): number {
  return b.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / rate.perSecond));
}
