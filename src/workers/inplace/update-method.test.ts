import { describe, expect, it } from 'vitest';
import type { PodTemplateSpec } from '../../api/pod-template.ts';
import { decideUpdateMethod } from './update-method.ts';

const t = (image: string, extra: Record<string, unknown> = {}): PodTemplateSpec => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image, ...extra }] },
});
const v1 = t('web:v1');
const env = t('web:v1', { env: [{ name: 'A', value: '1' }] });

interface Case {
  policy: string | undefined;
  from: PodTemplateSpec | undefined;
  to: PodTemplateSpec;
  mode: string;
  path?: string;
}

describe('decideUpdateMethod', () => {
  it.each<[string, Case]>([
    ['ReCreate recreates, whatever changed', { policy: 'ReCreate', from: v1, to: env, mode: 'recreate' }],
    ['no policy is ReCreate', { policy: undefined, from: v1, to: t('web:v2'), mode: 'recreate' }],
    ['InPlaceIfPossible: an image goes in place', { policy: 'InPlaceIfPossible', from: v1, to: t('web:v2'), mode: 'inPlace' }],
    ['InPlaceIfPossible: an env edit falls back', { policy: 'InPlaceIfPossible', from: v1, to: env, mode: 'recreate', path: '/spec/containers/0/env' }],
    ['InPlaceOnly: an env edit is refused', { policy: 'InPlaceOnly', from: v1, to: env, mode: 'refuse', path: '/spec/containers/0/env' }],
    [
      'InPlaceIfPossible: the pod revision is gone, so it falls back',
      { policy: 'InPlaceIfPossible', from: undefined, to: t('web:v2'), mode: 'recreate', path: '' },
    ],
    ['InPlaceOnly: the pod revision is gone, so it is refused', { policy: 'InPlaceOnly', from: undefined, to: t('web:v2'), mode: 'refuse', path: '' }],
  ])('%s', (_name, c) => {
    const d = decideUpdateMethod({ fromRevision: 'web-abc', from: c.from, to: c.to, podUpdatePolicy: c.policy });
    expect(d.mode).toBe(c.mode);
    const why = d.mode === 'refuse' ? d : d.mode === 'recreate' ? d.fallback : undefined;
    expect(why?.path).toBe(c.path);
  });
});
