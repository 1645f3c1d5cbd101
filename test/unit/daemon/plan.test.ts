import { describe, expect, it } from 'vitest';
import type { ImageListEntry, ImageStatus } from '../../../src/api/image-list.ts';
import { invalidMessage, planImages, type Action, type Plan } from '../../../src/daemon/plan.ts';
import { newMemory, type ImageMemory } from '../../../src/daemon/state.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const MIN = 60_000;
const RECHECK = 5 * MIN;
const IMG = 'registry.example.com/team/app:v1';
const LONG_NAME = `registry.example.com/${'a'.repeat(300)}:v1`;
const iso = (ms: number): string => new Date(ms).toISOString();

type MemoryPatch = Partial<Omit<ImageMemory, 'status' | 'entry'>> & { status?: Partial<ImageStatus> };

function mem(entry: ImageListEntry, patch: MemoryPatch = {}): ImageMemory {
  const m = newMemory(entry, undefined);
  const { status, ...rest } = patch;
  Object.assign(m, rest);
  m.status = { ...m.status, ...status };
  return m;
}

function plan(entry: ImageListEntry, patch: MemoryPatch | undefined, extra: { busy?: string[] } = {}): Plan {
  return planImages({
    entries: [entry],
    memory: new Map([[entry.image, mem(entry, patch)]]),
    busy: new Set(extra.busy ?? []),
    pullSlots: 2,
    checkSlots: 4,
    now: NOW,
    recheckPeriodMs: RECHECK,
  });
}

/** An action in the short form the tables use: `pull:<reason>`, `check`, `present`, `invalid`. */
function short(a: Action | undefined): string | undefined {
  if (!a) return undefined;
  return a.kind === 'pull' ? `pull:${a.reason}` : a.kind;
}

const checkedPresent: MemoryPatch = { present: true, checkedAt: NOW - MIN, status: { phase: 'Pulled', imageRef: 'sha256:aa' } };
const checkedAbsent: MemoryPatch = { present: false, checkedAt: NOW - MIN };

describe('planImages: one entry', () => {
  it.each<[string, ImageListEntry, MemoryPatch | undefined, string[], [string | undefined, number | undefined]]>([
    // name, entry, memory, busy, [expected action, expected wakeAt]
    ['new entry: ask the runtime first', { image: IMG }, undefined, [], ['check', undefined]],
    ['pull requested but never looked up: look up first', { image: IMG, pullRequestedAt: iso(NOW) }, undefined, [], ['check', undefined]],
    ['absent: pull', { image: IMG }, checkedAbsent, [], ['pull:absent', undefined]],
    ['present, never reported: report Pulled', { image: IMG }, { present: true, checkedAt: NOW - MIN }, [], ['present', undefined]],
    [
      'present after a failed pull (the kubelet got it): report Pulled',
      { image: IMG },
      { present: true, checkedAt: NOW, status: { phase: 'Failed', message: 'x' } },
      [],
      ['present', undefined],
    ],
    ['pulled, recheck not due: sleep until it is', { image: IMG }, checkedPresent, [], [undefined, NOW - MIN + RECHECK]],
    ['pulled, recheck due: look up again', { image: IMG }, { ...checkedPresent, checkedAt: NOW - RECHECK }, [], ['check', undefined]],
    ['pulled and gone (recheck found it absent): pull', { image: IMG }, { ...checkedAbsent, status: { phase: 'Pending' } }, [], ['pull:absent', undefined]],
    [
      'pullRequestedAt newer than answered: pull even though present',
      { image: IMG, pullRequestedAt: iso(NOW - 1000) },
      { ...checkedPresent, status: { ...checkedPresent.status, observedPullRequestedAt: iso(NOW - 5000) } },
      [],
      ['pull:requested', undefined],
    ],
    ['pullRequestedAt never answered: pull', { image: IMG, pullRequestedAt: iso(NOW - 1000) }, checkedPresent, [], ['pull:requested', undefined]],
    [
      'pullRequestedAt already answered: nothing',
      { image: IMG, pullRequestedAt: iso(NOW - 5000) },
      { ...checkedPresent, status: { ...checkedPresent.status, observedPullRequestedAt: iso(NOW - 5000) } },
      [],
      [undefined, NOW - MIN + RECHECK],
    ],
    [
      'pullRequestedAt older than answered: nothing',
      { image: IMG, pullRequestedAt: iso(NOW - 9000) },
      { ...checkedPresent, status: { ...checkedPresent.status, observedPullRequestedAt: iso(NOW - 5000) } },
      [],
      [undefined, NOW - MIN + RECHECK],
    ],
    [
      'alwaysPull alone does not pull a present image (re-pulls come as pull requests)',
      { image: IMG, alwaysPull: true },
      checkedPresent,
      [],
      [undefined, NOW - MIN + RECHECK],
    ],
    [
      'alwaysPull, interval passed: still only a pull request pulls',
      { image: IMG, alwaysPull: true, repullIntervalSeconds: 60 },
      { ...checkedPresent, status: { ...checkedPresent.status, lastPullTime: iso(NOW - 61_000) } },
      [],
      [undefined, NOW - MIN + RECHECK],
    ],
    [
      'alwaysPull with a new pull request: pull',
      { image: IMG, alwaysPull: true, pullRequestedAt: iso(NOW - 1000) },
      { ...checkedPresent, status: { ...checkedPresent.status, lastPullTime: iso(NOW - 60_000), observedPullRequestedAt: iso(NOW - 86_400_000) } },
      [],
      ['pull:requested', undefined],
    ],
    [
      'failed, backing off: sleep until the backoff ends',
      { image: IMG },
      { ...checkedAbsent, failures: 2, retryAt: NOW + 7000, status: { phase: 'Failed' } },
      [],
      [undefined, NOW + 7000],
    ],
    [
      'failed, backoff over: pull again',
      { image: IMG },
      { ...checkedAbsent, failures: 2, retryAt: NOW, status: { phase: 'Failed' } },
      [],
      ['pull:absent', undefined],
    ],
    ['failed lookup, backing off: no lookup yet', { image: IMG }, { failures: 1, retryAt: NOW + 5000 }, [], [undefined, NOW + 5000]],
    ['a call in flight: nothing more for this image', { image: IMG }, checkedAbsent, [IMG], [undefined, undefined]],
  ])('%s', (_name, entry, patch, busy, [action, wakeAt]) => {
    const p = plan(entry, patch, { busy });
    expect(p.actions.map(short)).toEqual(action ? [action] : []);
    expect(p.wakeAt).toBe(wakeAt);
  });
});

describe('planImages: invalid references', () => {
  it.each([
    ['a repository name over 255 characters', LONG_NAME],
    ['upper case in the path', 'registry.example.com/Team/app:v1'],
    ['an empty tag', 'nginx:'],
    // The CRD pattern admits any digest of 32 or more hex digits; containerd refuses these ("invalid checksum
    // digest length", "unsupported digest algorithm"), so they must not reach it.
    ['a sha256 digest of 40 hex digits', `registry.example.com/team/app@sha256:${'a'.repeat(40)}`],
    ['a digest of an algorithm runtimes do not support', `registry.example.com/team/app@sha1:${'a'.repeat(40)}`],
  ])('%s: Failed with a message naming the entry, and no runtime call', (_name, image) => {
    const p = plan({ image }, undefined);
    expect(p.actions).toHaveLength(1);
    const a = p.actions[0]!;
    expect(a.kind).toBe('invalid');
    if (a.kind === 'invalid') expect(a.message).toContain(JSON.stringify(image));
  });

  it('reports an invalid reference once', () => {
    const message = invalidMessage(LONG_NAME, 'repository name is longer than 255 characters');
    expect(plan({ image: LONG_NAME }, { status: { phase: 'Failed', message } }).actions).toEqual([]);
  });

  it('is reported even while another image fills every slot', () => {
    const entries = [{ image: 'a.example.com/x:1' }, { image: LONG_NAME }];
    const memory = new Map(entries.map((e) => [e.image, mem(e)]));
    const p = planImages({ entries, memory, busy: new Set(), pullSlots: 0, checkSlots: 0, now: NOW, recheckPeriodMs: RECHECK });
    expect(p.actions.map(short)).toEqual(['invalid']);
  });
});

describe('planImages: slots', () => {
  const entries = ['a', 'b', 'c', 'd'].map((n) => ({ image: `registry.example.com/${n}:1` }));

  it('starts no more pulls than free slots, in spec order', () => {
    const memory = new Map(entries.map((e) => [e.image, mem(e)]));
    for (const m of memory.values()) Object.assign(m, checkedAbsent);
    const p = planImages({ entries, memory, busy: new Set(), pullSlots: 2, checkSlots: 4, now: NOW, recheckPeriodMs: RECHECK });
    expect(p.actions.map((a) => ('image' in a ? a.image : a.kind))).toEqual([entries[0]!.image, entries[1]!.image]);
  });

  it('starts no more lookups than free lookup slots', () => {
    const memory = new Map(entries.map((e) => [e.image, mem(e)]));
    const p = planImages({ entries, memory, busy: new Set(), pullSlots: 2, checkSlots: 3, now: NOW, recheckPeriodMs: RECHECK });
    expect(p.actions.map(short)).toEqual(['check', 'check', 'check']);
  });

  it('skips entries without memory (not synced yet)', () => {
    const p = planImages({ entries, memory: new Map(), busy: new Set(), pullSlots: 2, checkSlots: 4, now: NOW, recheckPeriodMs: RECHECK });
    expect(p).toEqual({ actions: [], wakeAt: undefined });
  });
});
