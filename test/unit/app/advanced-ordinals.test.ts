/**
 * Scenario tests: reserved ordinals, the specified-delete label and the scale-up limit, looped through the
 * real planner and executor with the in-memory cluster and kubelet.
 */
import { describe, expect, it } from 'vitest';
import { Annotation, EventReason } from '../../../src/api/keys.ts';
import { SPECIFIED_DELETE_LABEL } from '../../../src/api/specified-delete.ts';
import { getPodRevision, isUnavailable } from '../../../src/workers/app/pods/predicates.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const policies = ['OrderedReady', 'Parallel'] as const;
const names = (s: Scenario): string[] => s.pods().map((p) => p.metadata.name ?? '');

function revisionAt(s: Scenario, pod: string): string | undefined {
  const p = s.cluster.pods.get(`${NS}/${pod}`);
  return p && getPodRevision(p);
}

function label(s: Scenario, pod: string): string {
  const key = `${NS}/${pod}`;
  const p = s.cluster.pods.get(key);
  if (!p) throw new Error(`${pod} missing`);
  s.cluster.pods.set(key, { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, [SPECIFIED_DELETE_LABEL]: 'true' } } });
  return p.metadata.uid;
}

describe.each(policies)('%s', (podManagementPolicy) => {
  it('reserving an ordinal moves its pod out without renumbering the others', async () => {
    const s = new Scenario({ replicas: 4, podManagementPolicy });
    await s.runUntil((x) => x.converged());
    const uids = new Map(s.pods().map((p) => [p.metadata.name, p.metadata.uid]));
    s.edit({ reserveOrdinals: [1] });
    await s.runUntil((x) => x.converged() && names(x).join() === 'web-0,web-2,web-3,web-4');
    for (const n of ['web-0', 'web-2', 'web-3']) expect(s.cluster.pods.get(`${NS}/${n}`)?.metadata.uid).toBe(uids.get(n));
    expect(s.cluster.podDeletions).toEqual(['web-1']);
    expect(s.app().status).toMatchObject({ replicas: 4, readyReplicas: 4, availableReplicas: 4 });
    expect(s.cluster.events.some((e) => e.event.reason === EventReason.successfulDelete && e.event.message.includes('reserved ordinal'))).toBe(true);
    expect(s.violations).toEqual([]);
  });

  it('lifting the reservation and scaling down brings the ordinal back, highest ones go', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy, reserveOrdinals: ['1-2'] });
    await s.runUntil((x) => x.converged());
    expect(names(s)).toEqual(['web-0', 'web-3', 'web-4']);
    s.edit({ reserveOrdinals: [] });
    await s.runUntil((x) => x.converged() && names(x).join() === 'web-0,web-1,web-2');
    expect(s.cluster.podDeletions).toEqual(['web-4', 'web-3']);
    expect(s.violations).toEqual([]);
  });

  it('a labelled pod is recreated with its identity and without the label', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy });
    await s.runUntil((x) => x.converged());
    const old = label(s, 'web-1');
    await s.runUntil((x) => x.converged() && x.cluster.pods.get(`${NS}/web-1`)?.metadata.uid !== old);
    const now = s.cluster.pods.get(`${NS}/web-1`);
    expect(now?.metadata.labels?.[SPECIFIED_DELETE_LABEL]).toBeUndefined();
    expect(s.cluster.podDeletions).toEqual(['web-1']);
    expect(s.violations).toEqual([]);
  });
});

describe('specified-delete below the partition', () => {
  it('the new pod gets the revision its ordinal should have', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy: 'Parallel' });
    await s.runUntil((x) => x.converged());
    const v1 = s.app().status?.updateRevision;
    s.edit({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'registry.example/web:v2' }] } },
    });
    await s.runUntil((x) => revisionAt(x, 'web-2') === x.app().status?.updateRevision && x.pods().length === 3);
    const old = label(s, 'web-0');
    await s.runUntil((x) => {
      const p = x.cluster.pods.get(`${NS}/web-0`);
      return p !== undefined && p.metadata.uid !== old && !isUnavailable(p, 0, x.clock.now());
    });
    expect(revisionAt(s, 'web-0')).toBe(v1);
  });
});

describe('scaleStrategy.maxUnavailable', () => {
  it('scale-up never has more unavailable pods than the limit', async () => {
    const s = new Scenario({ replicas: 1, podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 2 } }, { startTicks: 3 });
    await s.runUntil((x) => x.converged());
    s.edit({ replicas: 7 });
    let peak = 0;
    await s.runUntil((x) => {
      peak = Math.max(peak, x.pods().filter((p) => isUnavailable(p, 0, x.clock.now())).length);
      return x.converged();
    });
    expect(peak).toBe(2);
    expect(s.pods()).toHaveLength(7);
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.scaleUpLimited).length).toBeGreaterThanOrEqual(1);
  });

  it('without it, every pod is created at once', async () => {
    const s = new Scenario({ replicas: 1, podManagementPolicy: 'Parallel' }, { startTicks: 3 });
    await s.runUntil((x) => x.converged());
    s.edit({ replicas: 7 });
    await s.step();
    expect(s.pods().filter((p) => isUnavailable(p, 0, s.clock.now()))).toHaveLength(6);
  });
});

describe('specified-delete during an in-place update', () => {
  it('the pod being updated in place is deleted, and its in-place step is dropped', async () => {
    const s = new Scenario({
      replicas: 2,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    await s.runUntil((x) => x.converged());
    s.edit({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'registry.example/web:v2' }] } } });
    await s.runUntil((x) => x.cluster.pods.get(`${NS}/web-1`)?.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined);
    const old = label(s, 'web-1');
    const p = await s.step();
    const about = (p?.actions ?? []).filter((a) => 'name' in a && a.name === 'web-1').map((a) => (a.kind === 'deletePod' ? `${a.kind}:${a.cause}` : a.kind));
    expect(about).toEqual(['deletePod:specified']);
    await s.runUntil((x) => x.converged() && x.cluster.pods.get(`${NS}/web-1`)?.metadata.uid !== old);
    expect(s.violations).toEqual([]);
  });
});
