import { describe, expect, it } from 'vitest';
import type { ImageListEntry, ImageStatus } from '../../api/image-list.ts';
import { planRepull, requestOutstanding } from './repull-plan.ts';

const NOW = new Date('2026-01-01T12:00:00.400Z');
const NOW_S = '2026-01-01T12:00:00Z';
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();

const entry = (over: Partial<ImageListEntry> = {}): ImageListEntry => ({ image: 'r.example/a:1', alwaysPull: true, repullIntervalSeconds: 60, ...over });
const pulled = (over: Partial<ImageStatus> = {}): ImageStatus => ({ image: 'r.example/a:1', phase: 'Pulled', ...over });

describe('planRepull', () => {
  it.each([
    {
      name: 'due: last pull one interval ago',
      e: entry(),
      s: pulled({ lastPullTime: ago(60) }),
      owned: [],
      apply: [{ image: 'r.example/a:1', pullRequestedAt: NOW_S }],
      waitMs: undefined,
    },
    { name: 'not due: waits for the rest of the interval', e: entry(), s: pulled({ lastPullTime: ago(45) }), owned: [], apply: undefined, waitMs: 15_000 },
    { name: 'not alwaysPull: nothing', e: entry({ alwaysPull: false }), s: pulled({ lastPullTime: ago(600) }), owned: [], apply: undefined, waitMs: undefined },
    { name: 'never pulled and not Pulled: the daemon pulls it anyway', e: entry(), s: undefined, owned: [], apply: undefined, waitMs: undefined },
    {
      name: 'Pulled with no pull time: starts the cycle',
      e: entry(),
      s: pulled(),
      owned: [],
      apply: [{ image: 'r.example/a:1', pullRequestedAt: NOW_S }],
      waitMs: undefined,
    },
    {
      name: 'outstanding request: kept, no new one',
      e: entry({ pullRequestedAt: ago(5) }),
      s: pulled({ lastPullTime: ago(3600), observedPullRequestedAt: ago(3600) }),
      owned: ['r.example/a:1'],
      apply: undefined,
      waitMs: undefined,
    },
    {
      name: 'answered request: next one after the interval from the pull',
      e: entry({ pullRequestedAt: ago(30) }),
      s: pulled({ lastPullTime: ago(20), observedPullRequestedAt: ago(30) }),
      owned: ['r.example/a:1'],
      apply: undefined,
      waitMs: 40_000,
    },
    { name: 'a wait is never shorter than 1 s', e: entry(), s: pulled({ lastPullTime: ago(59.9) }), owned: [], apply: undefined, waitMs: 1_000 },
    {
      name: 'default interval is a day',
      e: entry({ repullIntervalSeconds: undefined }),
      s: pulled({ lastPullTime: ago(3600) }),
      owned: [],
      apply: undefined,
      waitMs: 82_800_000,
    },
    {
      name: 'no longer alwaysPull: released',
      e: entry({ alwaysPull: false, pullRequestedAt: ago(100) }),
      s: pulled({ lastPullTime: ago(90), observedPullRequestedAt: ago(100) }),
      owned: ['r.example/a:1'],
      apply: [],
      waitMs: undefined,
    },
  ])('$name', ({ e, s, owned, apply, waitMs }) => {
    const plan = planRepull({ entries: [e], status: s ? [s] : [], owned: new Set(owned), now: NOW });
    expect(plan.apply).toEqual(apply);
    expect(plan.waitMs).toBe(waitMs);
  });

  it('keeps the entries it owns when another one falls due, and waits for the earliest', () => {
    const b = 'r.example/b:1';
    const c = 'r.example/c:1';
    const plan = planRepull({
      entries: [entry(), entry({ image: b, pullRequestedAt: ago(50) }), entry({ image: c, repullIntervalSeconds: 120 })],
      status: [
        pulled({ lastPullTime: ago(61) }),
        pulled({ image: b, lastPullTime: ago(40), observedPullRequestedAt: ago(50) }),
        pulled({ image: c, lastPullTime: ago(100) }),
      ],
      owned: new Set([b]),
      now: NOW,
    });
    expect(plan.requested).toEqual(['r.example/a:1']);
    expect(plan.apply).toEqual([
      { image: 'r.example/a:1', pullRequestedAt: NOW_S },
      { image: b, pullRequestedAt: ago(50) },
    ]);
    expect(plan.waitMs).toBe(20_000);
  });

  it('asks for a pull later than the last one, at whole seconds', () => {
    const plan = planRepull({ entries: [entry()], status: [pulled({ lastPullTime: ago(60.3) })], owned: new Set(), now: NOW });
    const at = plan.apply?.[0]?.pullRequestedAt ?? '';
    expect(at).toBe(NOW_S);
    expect(Date.parse(at)).toBeGreaterThan(Date.parse(ago(60.3)));
  });
});

describe('requestOutstanding', () => {
  it.each([
    { requested: undefined, observed: undefined, out: false },
    { requested: ago(10), observed: undefined, out: true },
    { requested: ago(10), observed: ago(20), out: true },
    { requested: ago(10), observed: ago(10), out: false },
  ])('requested $requested observed $observed → $out', ({ requested, observed, out }) => {
    expect(requestOutstanding(entry({ pullRequestedAt: requested }), pulled({ observedPullRequestedAt: observed }))).toBe(out);
  });
});
