import { describe, expect, it } from 'vitest';
import { parseQuantity, qosClass, resizableOf, sameQuantity, sameResizable } from './quantity.ts';

describe('quantities', () => {
  it.each<[string, number | undefined]>([
    ['100m', 0.1],
    ['1.5', 1.5],
    ['512Mi', 512 * 2 ** 20],
    ['1G', 1e9],
    ['1e3', 1000],
    ['abc', undefined],
  ])('parses %s', (q, v) => expect(parseQuantity(q)).toBe(v));

  it.each<[string | undefined, string | undefined, boolean]>([
    ['1', '1000m', true],
    ['0.1', '100m', true],
    ['1Gi', '1024Mi', true],
    ['100m', '200m', false],
    [undefined, undefined, true],
    ['1', undefined, false],
  ])('%s same as %s: %s', (a, b, same) => expect(sameQuantity(a, b)).toBe(same));

  it('treats requests defaulted from limits as equal to explicit ones', () => {
    expect(sameResizable({ limits: { cpu: '1' } }, { requests: { cpu: '1' }, limits: { cpu: '1' } })).toBe(true);
    expect(sameResizable({ limits: { cpu: '1' } }, { requests: { cpu: '500m' }, limits: { cpu: '1' } })).toBe(false);
  });

  it('keeps only cpu and memory requests and limits', () => {
    expect(resizableOf({ requests: { cpu: '1', 'ephemeral-storage': '1Gi' }, limits: { 'nvidia.com/gpu': '1' }, claims: [] })).toEqual({
      requests: { cpu: '1' },
    });
  });
});

describe('qosClass', () => {
  const c = (resources?: object) => ({ name: 'c', image: 'i', ...(resources ? { resources } : {}) });
  it.each<[string, object, string]>([
    ['no resources', { containers: [c()] }, 'BestEffort'],
    ['zero requests only', { containers: [c({ requests: { cpu: '0' } })] }, 'BestEffort'],
    ['requests only', { containers: [c({ requests: { cpu: '100m' } })] }, 'Burstable'],
    [
      'limits equal requests for cpu and memory',
      { containers: [c({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })] },
      'Guaranteed',
    ],
    ['limits only (requests default to them)', { containers: [c({ limits: { cpu: '1', memory: '1Gi' } })] }, 'Guaranteed'],
    ['cpu limit only', { containers: [c({ limits: { cpu: '1' } })] }, 'Burstable'],
    ['requests below limits', { containers: [c({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })] }, 'Burstable'],
    ['one container without limits', { containers: [c({ limits: { cpu: '1', memory: '1Gi' } }), c()] }, 'Burstable'],
    ['an init container counts', { initContainers: [c()], containers: [c({ limits: { cpu: '1', memory: '1Gi' } })] }, 'Burstable'],
    ['pod-level resources win', { resources: { limits: { cpu: '1', memory: '1Gi' } }, containers: [c()] }, 'Guaranteed'],
  ])('%s → %s', (_n, spec, qos) => expect(qosClass(spec)).toBe(qos));
});
