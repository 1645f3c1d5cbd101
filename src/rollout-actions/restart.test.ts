import { describe, expect, it } from 'vitest';
import type { App } from '../api/app.ts';
import type { UpdateStrategy } from '../api/update-strategy.ts';
import { planRestart, RESTARTED_AT_ANNOTATION } from './restart.ts';

const NOW = new Date('2026-03-04T05:06:07.890Z');
const app = (updateStrategy?: UpdateStrategy): App => ({
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'App',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:1' }] } },
    ...(updateStrategy ? { updateStrategy } : {}),
  },
});
const stamp = { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: '2026-03-04T05:06:07Z' } } } } };

describe('planRestart', () => {
  it.each<[string, UpdateStrategy | undefined, string[]]>([
    ['the defaults', undefined, []],
    ['ReCreate', { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } }, []],
    [
      'InPlaceIfPossible, saying the pods are recreated',
      { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
      ['pods are recreated: a restart is never done in place'],
    ],
    [
      'a paused rollout, saying so',
      { type: 'RollingUpdate', rollingUpdate: { paused: true } },
      ['the rollout is paused: pods are replaced after `rollout resume`'],
    ],
    ['OnDelete, saying so', { type: 'OnDelete' }, ['with the OnDelete strategy a pod is replaced only when it is deleted']],
  ])('stamps the template with the time in seconds for %s', (_, strategy, notes) => {
    expect(planRestart(app(strategy), NOW)).toEqual({ kind: 'patch', patch: stamp, notes });
  });

  it('refuses under InPlaceOnly, which never recreates a pod', () => {
    const plan = planRestart(app({ type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } }), NOW);
    expect(plan.kind).toBe('refuse');
    if (plan.kind === 'refuse') expect(plan.message).toContain('app "web" has podUpdatePolicy InPlaceOnly, which never recreates a pod');
  });
});
