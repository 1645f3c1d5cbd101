import { describe, expect, it } from 'vitest';
import { crashes, effectivePullPolicy, goDuration, shouldPullImage, shouldRestart } from './policy.ts';
import { getPodQOS, milli, parseQuantity, sameQuantities } from './quantity.ts';
import { backoffFor, defaultFaults, scaled } from './timings.ts';
import { testPod } from './test-fixtures.ts';

describe('kubelet policies', () => {
  it.each<[string, string | undefined, string]>([
    ['nginx', undefined, 'Always'],
    ['nginx:latest', undefined, 'Always'],
    ['nginx:1.25', undefined, 'IfNotPresent'],
    [`nginx@sha256:${'a'.repeat(64)}`, undefined, 'IfNotPresent'],
    ['nginx:latest', 'IfNotPresent', 'IfNotPresent'],
    ['nginx:1.25', 'Never', 'Never'],
  ])('pull policy of %s (spec %s) is %s', (image, policy, want) => {
    expect(effectivePullPolicy({ image, ...(policy ? { imagePullPolicy: policy } : {}) })).toBe(want);
  });

  it.each<['Always' | 'IfNotPresent' | 'Never', boolean, boolean]>([
    ['Always', true, true],
    ['Always', false, true],
    ['IfNotPresent', true, false],
    ['IfNotPresent', false, true],
    ['Never', false, false],
    ['Never', true, false],
  ])('shouldPullImage(%s, present=%s) = %s', (policy, present, want) => {
    expect(shouldPullImage(policy, present)).toBe(want);
  });

  it.each<[string | undefined, 'init' | 'sidecar' | 'regular', number, boolean]>([
    [undefined, 'regular', 0, true],
    ['OnFailure', 'regular', 0, false],
    ['OnFailure', 'regular', 1, true],
    ['Never', 'regular', 1, false],
    ['Never', 'sidecar', 0, true],
    ['Always', 'init', 0, false],
    ['Always', 'init', 1, true],
    ['Never', 'init', 1, false],
  ])('restartPolicy %s, %s container, exit %s → restart %s', (policy, kind, exitCode, want) => {
    expect(shouldRestart(testPod(policy ? { restartPolicy: policy } : {}), kind, exitCode)).toBe(want);
  });

  it.each<[number, string]>([
    [400, '400ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [10_000, '10s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
  ])('goDuration(%s) = %s', (ms, want) => {
    expect(goDuration(ms)).toBe(want);
  });

  it.each<[number, number]>([
    [0, 0],
    [1, 10_000],
    [2, 20_000],
    [5, 160_000],
    [6, 300_000],
    [40, 300_000],
  ])('back-off after %s failures is %s ms', (n, want) => {
    expect(backoffFor(n, 10_000, 300_000)).toBe(want);
  });

  it('scales delays of a slow node, leaving infinity alone', () => {
    expect(scaled(100, { slowdown: 3 })).toBe(300);
    expect(scaled(Number.POSITIVE_INFINITY, { slowdown: 3 })).toBe(Number.POSITIVE_INFINITY);
  });

  it.each<[string, boolean]>([
    ['example.com/crashloop-app:1', true],
    ['crashloop', true],
    ['example.com/team/crashloop@sha256:' + 'b'.repeat(64), true],
    ['example.com/crashloop-app/other:1', false],
    ['nginx:1.25', false],
    ['quay.io/me/bad:1', true],
  ])('%s crashes: %s', (image, want) => {
    expect(crashes(image, { ...defaultFaults, crashImages: ['quay.io/me/bad:1'] })).toBe(want);
  });
});

describe('quantities', () => {
  it.each<[string, number | undefined]>([
    ['100m', 0.1],
    ['1', 1],
    ['1.5', 1.5],
    ['1Ki', 1024],
    ['64Mi', 64 * 2 ** 20],
    ['1G', 1e9],
    ['1e3', 1000],
    ['abc', undefined],
  ])('parseQuantity(%s) = %s', (q, want) => {
    expect(parseQuantity(q)).toBe(want);
  });

  it('compares quantities by value', () => {
    expect(milli('0.5')).toBe(500);
    expect(sameQuantities({ cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1024Mi' }, ['cpu', 'memory'])).toBe(true);
    expect(sameQuantities({ cpu: '1' }, {}, ['cpu'])).toBe(false);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no resources', {}, 'BestEffort'],
    ['requests only', { requests: { cpu: '1' } }, 'Burstable'],
    ['equal requests and limits', { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1Gi' } }, 'Guaranteed'],
    ['limits only (requests default to them)', { limits: { cpu: '1', memory: '1Gi' } }, 'Guaranteed'],
  ])('QoS with %s is %s', (_name, resources, want) => {
    expect(getPodQOS(testPod({ containers: [{ name: 'a', image: 'x:1', resources }] }))).toBe(want);
  });
});
