import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { Condition } from '../../../api/meta.ts';
import { makeApp, podFor, stored } from '../../../../test/unit/app/fixtures.ts';
import type { ControllerRevision, PersistentVolumeClaim, Stored } from '../../../kube/types.ts';
import type { Action } from '../model/actions.ts';
import { plan } from '../planner.ts';
import type { Observed } from '../model/plan.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';
import { newRevision, revisionData, revisionHash } from '../revisions/revisions.ts';
import { CLAIM_RESIZE_RECHECK_MS, claimGrowth, EXPANSION_RETRY_MS, EXPANSION_RETRY_WAIT, refusalMessage, RESIZE_WAIT } from './volume-growth.ts';

const NOW = new Date('2025-06-01T00:00:00Z');
const v = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });
const templates = (storage: string) => [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } }];
const grow = { volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' as const } };
const rolling = (ru: object = {}) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: ru } });

function revisionFor(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  const app = makeApp('web', spec);
  return stored<ControllerRevision>(newRevision(app, revisionData(app), n, 0), `rev-${n}`);
}

/** Claim `data-web-<ordinal>`: `[request, capacity]`, bound unless `bound` is false. */
function claim(ordinal: number, request: string, capacity: string | undefined, bound = true): Stored<PersistentVolumeClaim> {
  return stored<PersistentVolumeClaim>(
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `data-web-${ordinal}`, namespace: 'ns' },
      spec: { resources: { requests: { storage: request } }, ...(bound ? { volumeName: `pv-${ordinal}` } : {}) },
      status: { phase: bound ? 'Bound' : 'Pending', ...(capacity ? { capacity: { storage: capacity } } : {}) },
    },
    `claim-${ordinal}`,
    `rv-${ordinal}`,
  );
}

interface World {
  spec?: Partial<AppSpec>;
  /** Template tag of the update revision (the pods run v1). */
  tag?: string;
  /** Per ordinal 0..2: at the old or the new revision. */
  pods?: ('old' | 'new')[];
  claims?: Stored<PersistentVolumeClaim>[] | undefined;
  conditions?: Condition[];
}

/** Three ready pods, claim templates grown from 1Gi to 2Gi (OnPodRollingUpdate, RollingUpdate unless `spec` says otherwise). */
function world(w: World = {}): Observed {
  const spec: Partial<AppSpec> = { replicas: 3, podManagementPolicy: 'Parallel', ...grow, ...rolling(), ...w.spec };
  const oldRev = revisionFor({ ...spec, template: v('v1'), volumeClaimTemplates: templates('1Gi') }, 1);
  const newRev = revisionFor({ ...spec, template: v(w.tag ?? 'v1'), volumeClaimTemplates: templates('2Gi') }, 2);
  const app = makeApp('web', { ...spec, template: v(w.tag ?? 'v1'), volumeClaimTemplates: templates('2Gi') });
  app.status = { observedGeneration: 1, currentRevision: oldRev.metadata.name, updateRevision: newRev.metadata.name, conditions: w.conditions ?? [] };
  // Every refusal below is of claim data-web-2: the status names it beside the condition, as the executor writes it.
  if (w.conditions?.some((c) => c.type === 'VolumeExpansionRefused' && c.status === 'True')) app.status.expansionRefusedClaim = 'data-web-2';
  const pods = (w.pods ?? ['old', 'old', 'old']).map((r, o) => podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name));
  const claims = 'claims' in w ? w.claims : [0, 1, 2].map((o) => claim(o, '1Gi', '1Gi'));
  return { app, pods, revisions: [oldRev, newRev], claims };
}

const summary = (actions: readonly Action[]): string[] =>
  actions.flatMap((a) => {
    switch (a.kind) {
      case 'expandPvc':
        return [`expand ${a.name} to ${a.storage} (rv ${a.resourceVersion ?? ''})`];
      case 'inPlaceStep':
        return [`relabel ${a.name} (${a.step.kind})`];
      case 'deletePod':
        return [`delete ${a.name}`];
      case 'event':
        return [];
      default:
        return [a.kind];
    }
  });

const refused = (claimName: string, since: Date, generation = 1): Condition => ({
  type: 'VolumeExpansionRefused',
  status: 'True',
  reason: 'ExpansionRefused',
  message: refusalMessage(claimName, '2Gi', 'web-2', 'forbidden'),
  lastTransitionTime: `${since.toISOString().slice(0, 19)}Z`,
  observedGeneration: generation,
});

describe('volume growth in the rolling update', () => {
  it.each<[string, World, string[]]>([
    ['the highest outdated pod’s claim is expanded first, the pod waits', {}, ['expand data-web-2 to 2Gi (rv rv-2)']],
    ['while the claim resizes, nothing else moves (pod by pod)', { claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '2Gi', '1Gi')] }, []],
    [
      'once the claim reports the capacity, its pod is updated (relabelled: the pod template did not change)',
      { claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '2Gi', '2Gi')] },
      ['relabel web-2 (patchSpec)'],
    ],
    [
      'the next pod’s claim follows once the previous pod is updated',
      { pods: ['old', 'old', 'new'], claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '2Gi', '2Gi')] },
      ['expand data-web-1 to 2Gi (rv rv-1)'],
    ],
    [
      'maxUnavailable 2: two pods’ claims at once',
      { spec: rolling({ maxUnavailable: 2 }) },
      ['expand data-web-2 to 2Gi (rv rv-2)', 'expand data-web-1 to 2Gi (rv rv-1)'],
    ],
    [
      'a claim larger than the template already (grown by hand) counts as grown',
      { claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '3Gi', '3Gi')] },
      ['relabel web-2 (patchSpec)'],
    ],
    [
      'an unbound claim cannot be expanded: it counts as grown',
      { claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '1Gi', undefined, false)] },
      ['relabel web-2 (patchSpec)'],
    ],
    ['the partition holds the pods below it (and their claims)', { spec: rolling({ partition: 3 }) }, []],
    ['paused: no claim is expanded', { spec: rolling({ paused: true }) }, []],
    ['OnDelete pods: no rolling update, no expansion', { spec: { updateStrategy: { type: 'OnDelete' } } }, []],
    ['an image change too, ReCreate: the claim grows before the pod is deleted', { tag: 'v2' }, ['expand data-web-2 to 2Gi (rv rv-2)']],
    [
      'an image change too, ReCreate: once grown, the pod is recreated',
      { tag: 'v2', claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '2Gi', '2Gi')] },
      ['delete web-2'],
    ],
    ['a refusal less than a minute old is not retried', { conditions: [refused('data-web-2', new Date(NOW.getTime() - 10_000))] }, []],
    [
      'a refusal older than a minute is retried',
      { conditions: [refused('data-web-2', new Date(NOW.getTime() - 61_000))] },
      ['expand data-web-2 to 2Gi (rv rv-2)'],
    ],
    [
      'a refusal of an earlier generation is retried at once',
      { conditions: [refused('data-web-2', new Date(NOW.getTime() - 10_000), 0)] },
      ['expand data-web-2 to 2Gi (rv rv-2)'],
    ],
  ])('%s', (_name, w, expected) => {
    const p = planned(world(w), NOW);
    expect(summary(p.actions)).toEqual(expected);
  });

  it('asks for the claims when they were not read', () => {
    expect(plan(world({ claims: undefined }), NOW)).toEqual({ needs: 'claims' });
  });

  it('waits for the resize on a timer (claims are not watched), and for the retry of a refusal', () => {
    expect(planned(world(), NOW).wait).toEqual({ reason: RESIZE_WAIT, afterMs: CLAIM_RESIZE_RECHECK_MS });
    const resizing = planned(world({ claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '2Gi', '1Gi')] }), NOW);
    expect(resizing.wait).toEqual({ reason: RESIZE_WAIT, afterMs: CLAIM_RESIZE_RECHECK_MS });
    const held = planned(world({ conditions: [refused('data-web-2', new Date(NOW.getTime() - 10_000))] }), NOW);
    expect(held.wait).toEqual({ reason: EXPANSION_RETRY_WAIT, afterMs: EXPANSION_RETRY_MS - 10_000 });
  });

  it('keeps VolumeExpansionRefused while its claim still needs growing, and clears it once the claim grew', () => {
    const condition = refused('data-web-2', new Date(NOW.getTime() - 10_000));
    const held = planned(world({ conditions: [condition] }), NOW);
    expect(held.status.conditions?.find((c) => c.type === 'VolumeExpansionRefused')).toEqual(condition);
    const grown = planned(world({ conditions: [condition], claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi'), claim(2, '2Gi', '2Gi')] }), NOW);
    expect(grown.status.conditions?.find((c) => c.type === 'VolumeExpansionRefused')).toMatchObject({ status: 'False', reason: 'NoExpansionRefused' });
    const deleted = planned(world({ conditions: [condition], claims: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi')] }), NOW);
    expect(deleted.status.conditions?.find((c) => c.type === 'VolumeExpansionRefused')).toMatchObject({ status: 'False' });
    const respecified = planned(world({ conditions: [refused('data-web-2', new Date(NOW.getTime() - 10_000), 0)] }), NOW);
    expect(respecified.status.conditions?.find((c) => c.type === 'VolumeExpansionRefused')).toMatchObject({ status: 'False' });
    expect(held.status.expansionRefusedClaim).toBe('data-web-2');
    expect(grown.status.expansionRefusedClaim).toBeUndefined();
    const unread = planned(world({ conditions: [condition], spec: rolling({ partition: 3 }), claims: undefined }), NOW);
    expect(unread.status.conditions?.find((c) => c.type === 'VolumeExpansionRefused')).toEqual(condition);
  });
});

describe('revisions and claim templates', () => {
  const hashOf = (spec: Partial<AppSpec>): string => {
    const app = makeApp('web', { template: v('v1'), ...spec });
    return revisionHash(revisionData(app), 0);
  };

  it('OnPodRollingUpdate: a larger storage request is a new revision', () => {
    expect(hashOf({ ...grow, volumeClaimTemplates: templates('2Gi') })).not.toBe(hashOf({ ...grow, volumeClaimTemplates: templates('1Gi') }));
  });

  it('OnDelete (and unset): revisions hold the pod template only, so a larger request rolls nothing', () => {
    expect(hashOf({ volumeClaimTemplates: templates('2Gi') })).toBe(hashOf({ volumeClaimTemplates: templates('1Gi') }));
    expect(hashOf({ volumeClaimTemplates: templates('2Gi'), volumeClaimUpdateStrategy: { type: 'OnDelete' } })).toBe(hashOf({}));
  });

  it('OnDelete: existing claims are never expanded', () => {
    const w = world({ spec: { volumeClaimUpdateStrategy: { type: 'OnDelete' } } });
    const p = planned(w, NOW);
    expect(summary(p.actions)).toEqual([]);
  });
});

describe('claimGrowth', () => {
  it.each<[string, Stored<PersistentVolumeClaim>, string, string]>([
    ['request and capacity reached', claim(0, '2Gi', '2Gi'), '2Gi', 'ready'],
    ['same size in another unit', claim(0, '2048Mi', '2Gi'), '2Gi', 'ready'],
    ['request below the template', claim(0, '1Gi', '1Gi'), '2Gi', 'expand'],
    ['requested, capacity not yet', claim(0, '2Gi', '1Gi'), '2Gi', 'resizing'],
    ['requested, no capacity reported', claim(0, '2Gi', undefined), '2Gi', 'resizing'],
    ['unbound', claim(0, '1Gi', undefined, false), '2Gi', 'ready'],
  ])('%s', (_name, c, want, kind) => {
    expect(claimGrowth(c, want).kind).toBe(kind);
  });
});
