import { describe, expect, it } from 'vitest';
import { makeApp } from '../../../../test/unit/app/fixtures.ts';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { App } from '../../../api/app.ts';
import type { Stored } from '../../../kube/types.ts';
import { derivedRevisions, revisionData, revisionHash } from './revisions.ts';

const template = (tag: string): AppSpec['template'] => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: `web:${tag}` }] },
});

/** An App at `tag` whose status names the revision of `statusTag` as update revision and `current` as current. */
function app(
  opts: { tag?: string; statusTag?: string; current?: string; collisionCount?: number; observed?: number; spec?: Partial<AppSpec> } = {},
): Stored<App> {
  const a = makeApp('web', { template: template(opts.tag ?? 'v2'), ...opts.spec });
  a.metadata.generation = 2;
  const statusApp = makeApp('web', { template: template(opts.statusTag ?? opts.tag ?? 'v2'), ...opts.spec });
  const update = `web-${revisionHash(revisionData(statusApp), opts.collisionCount ?? 0)}`;
  a.status = {
    observedGeneration: opts.observed ?? 2,
    updateRevision: update,
    currentRevision: opts.current ?? update,
    collisionCount: opts.collisionCount ?? 0,
  };
  return a;
}

describe('derivedRevisions', () => {
  it('takes both revisions from a status that names this template', () => {
    const a = app({ collisionCount: 1 });
    const r = derivedRevisions(a);
    expect(r?.update.metadata.name).toBe(a.status?.updateRevision);
    expect(r?.update.data).toEqual(revisionData(a));
    expect(r?.current).toBe(r?.update);
    expect(r).toMatchObject({ owned: [], actions: [], collisionCount: 1 });
  });

  it('mid-rollout, the current revision by name only (no template is taken from it)', () => {
    const r = derivedRevisions(app({ current: 'web-old' }));
    expect(r?.current.metadata.name).toBe('web-old');
    expect(r?.current.data).toBeUndefined();
  });

  it.each<[string, Parameters<typeof app>[0]]>([
    ['the template changed since the status', { statusTag: 'v1' }],
    ['the status is of an older generation', { observed: 1 }],
    ['mid-rollout with a partition', { current: 'web-old', spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } } }],
    [
      'mid-rollout with in-place updates',
      { current: 'web-old', spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } } },
    ],
    [
      'mid-rollout with claims grown in the rolling update (a claims-only revision relabels pods: the templates are compared)',
      { current: 'web-old', spec: { volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' } } },
    ],
    [
      'mid-rollout with canary steps',
      { current: 'web-old', spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps: [{ replicas: 1 }] } } } } },
    ],
  ])('needs the list when %s', (_, opts) => {
    expect(derivedRevisions(app(opts))).toBeUndefined();
  });

  it('needs the list for an App without status', () => {
    const a = app();
    delete a.status;
    expect(derivedRevisions(a)).toBeUndefined();
  });
});
