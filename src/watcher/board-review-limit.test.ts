import { describe, expect, it } from 'vitest';
import { ReviewLimiter, ReviewRateLimited } from './board-review-limit.ts';

describe('ReviewLimiter', () => {
  const refused = (l: ReviewLimiter, client: string): ReviewRateLimited | undefined => {
    try {
      l.take(client);
      return undefined;
    } catch (err) {
      if (err instanceof ReviewRateLimited) return err;
      throw err;
    }
  };

  it('spends one client’s burst, then refuses it with a Retry-After, and gives back at its rate', () => {
    let now = 0;
    const l = new ReviewLimiter({ perSecond: 1, burst: 3 }, { perSecond: 100, burst: 100 }, () => now);
    for (let i = 0; i < 3; i++) expect(refused(l, 'a')).toBeUndefined();
    expect(refused(l, 'a')?.retryAfterS).toBe(1);
    // Another address has its own bucket.
    expect(refused(l, 'b')).toBeUndefined();
    now += 1_000;
    expect(refused(l, 'a')).toBeUndefined();
    expect(refused(l, 'a')).toBeInstanceOf(ReviewRateLimited);
  });

  it('bounds every client together: many addresses cannot add up past the overall burst', () => {
    let now = 0;
    const l = new ReviewLimiter({ perSecond: 1, burst: 5 }, { perSecond: 2, burst: 4 }, () => now);
    const results = Array.from({ length: 10 }, (_, i) => refused(l, `10.0.0.${i}`));
    expect(results.filter((r) => r === undefined)).toHaveLength(4);
    expect(results[4]?.code).toBe('ReviewRateLimited');
    now += 500;
    expect(refused(l, '10.0.0.9')).toBeUndefined();
  });
});
