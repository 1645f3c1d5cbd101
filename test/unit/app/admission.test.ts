/**
 * Scenario tests: a pod is never deleted when its replacement would be refused. The in-memory cluster's
 * admission refuses what a policy, Pod Security or a quota would; the worker dry-runs before it deletes.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import type { PersistentVolumeClaim, Pod } from '../../../src/kube/types.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const denied = new KubeError(
  'Invalid',
  422,
  'POST pods: denied',
  'Invalid',
  'pods "web-2-x1" is forbidden: ValidatingAdmissionPolicy deny-blocked denied request: blocked',
);
const quota = new KubeError(
  'QuotaExceeded',
  403,
  'POST pods: quota',
  'Forbidden',
  'pods "web-2-x1" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3',
);

/** A policy that refuses pods labelled blocked=yes. */
const refuseBlocked = (obj: Pod | PersistentVolumeClaim): Error | undefined =>
  obj.kind === 'Pod' && obj.metadata?.labels?.['blocked'] === 'yes' ? denied : undefined;

const template = (labels: Record<string, string>, image = 'registry.example/web:v1', port?: number) => ({
  template: {
    metadata: { labels: { app: 'web', ...labels } },
    spec: { containers: [{ name: 'main', image, ...(port === undefined ? {} : { ports: [{ containerPort: port }] }) }] },
  },
});

const condition = (s: Scenario, type: string) => s.app().status?.conditions?.find((c) => c.type === type);
const eventsOf = (s: Scenario, reason: string) => s.cluster.events.filter((e) => e.event.reason === reason);

async function converged(spec: ConstructorParameters<typeof Scenario>[0]): Promise<Scenario> {
  const s = new Scenario(spec, { terminateTicks: 1, startTicks: 1 });
  await s.runUntil((x) => x.converged());
  return s;
}

describe.each([
  ['ReCreate', { maxUnavailable: 1 }],
  ['InPlaceIfPossible', { maxUnavailable: 1 }],
  ['ReCreate', { maxUnavailable: '50%' }],
] as const)('%s, %o: a template the cluster refuses', (podUpdatePolicy, rolling) => {
  it('holds the rollout with every pod running, says why once, and goes on once the template is fixed', async () => {
    const s = await converged({
      replicas: 4,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { ...rolling, podUpdatePolicy } },
    });
    s.cluster.admission = refuseBlocked;
    const uids = s.pods().map((p) => p.metadata.uid);
    // A port change cannot be done in place: every pod would be recreated.
    s.edit(template({ blocked: 'yes' }, 'registry.example/web:v2', 8080));
    for (let i = 0; i < 6; i++) await s.step();

    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.pods().map((p) => p.metadata.uid)).toEqual(uids);
    expect(s.violations).toEqual([]);
    const held = condition(s, ConditionType.rolloutHeld);
    expect(held).toMatchObject({ status: 'True', reason: 'ReplacementRefused' });
    expect(held?.message).toContain('ValidatingAdmissionPolicy deny-blocked denied request');
    expect(held?.message).toContain(s.app().status?.updateRevision ?? 'no revision');
    expect(eventsOf(s, EventReason.rolloutHeld)).toHaveLength(1);

    s.edit(template({ blocked: 'no' }, 'registry.example/web:v3', 8080));
    await s.runUntil((x) => x.converged() && x.pods().every((p) => p.spec?.containers[0]?.image === 'registry.example/web:v3'));
    expect(condition(s, ConditionType.rolloutHeld)).toMatchObject({ status: 'False', reason: 'ReplacementAccepted' });
    expect(s.violations).toEqual([]);
  });
});

describe('the dry run before a delete', () => {
  it('costs one request per revision, not per pod', async () => {
    const s = await converged({ replicas: 5, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } } });
    s.edit(template({}, 'registry.example/web:v2'));
    await s.runUntil((x) => x.converged() && x.cluster.podDeletions.length === 5);
    expect(s.cluster.calls.count('pods.dryRun')).toBe(1);
    s.edit(template({}, 'registry.example/web:v3'));
    await s.runUntil((x) => x.converged() && x.cluster.podDeletions.length === 10);
    expect(s.cluster.calls.count('pods.dryRun')).toBe(2);
  });

  it('does not hold for a quota refusal: the pod about to go still counts', async () => {
    const s = await converged({ replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } } });
    // Three pods fill the quota: a fourth (the dry run's) is refused, a replacement once its old pod is gone is not.
    s.cluster.admission = (obj) => (obj.kind === 'Pod' && s.pods().length >= 3 ? quota : undefined);
    s.edit(template({}, 'registry.example/web:v2'));
    await s.runUntil((x) => x.converged() && x.cluster.podDeletions.length === 3);
    expect(condition(s, ConditionType.rolloutHeld)).toBeUndefined();
  });

  it('resumes without an edit once the policy is relaxed: a refusal is asked again, not remembered', async () => {
    const s = await converged({ replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } } });
    s.cluster.admission = refuseBlocked;
    s.edit(template({ blocked: 'yes' }));
    for (let i = 0; i < 3; i++) await s.step();
    expect(s.cluster.podDeletions).toEqual([]);
    s.cluster.admission = undefined;
    await s.runUntil((x) => x.converged() && x.pods().every((p) => p.metadata.labels?.['blocked'] === 'yes'));
    expect(condition(s, ConditionType.rolloutHeld)).toMatchObject({ status: 'False' });
  });

  it('a dry run that fails for a reason that heals throws for a retry and deletes nothing', async () => {
    const s = await converged({ replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } } });
    s.cluster.calls.failNth('pods.dryRun', 1, new KubeError('ServerError', 500, 'POST pods: failed calling webhook'));
    s.edit(template({}, 'registry.example/web:v2'));
    await expect(s.reconcile()).rejects.toMatchObject({ code: 'ServerError' });
    expect(s.cluster.podDeletions).toEqual([]);
    await s.runUntil((x) => x.converged() && x.cluster.podDeletions.length === 2);
  });

  it('a webhook that cannot take part in a dry run does not hold the rollout', async () => {
    const s = await converged({ replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } } });
    s.cluster.calls.failNth('pods.dryRun', 1, new KubeError('DryRunUnsupported', 400, 'POST pods: webhook "audit" does not support dry run'));
    s.edit(template({}, 'registry.example/web:v2'));
    await s.runUntil((x) => x.converged() && x.cluster.podDeletions.length === 2);
    expect(condition(s, ConditionType.rolloutHeld)).toBeUndefined();
  });

  it('a failed pod is not deleted when its replacement would be refused', async () => {
    const s = await converged({ replicas: 2, updateStrategy: { type: 'OnDelete' } });
    s.cluster.admission = refuseBlocked;
    s.edit(template({ blocked: 'yes' }));
    await s.step();
    const pod = s.cluster.pods.get(`${NS}/web-1`)!;
    s.cluster.kubeletPatchStatus(NS, 'web-1', { status: { phase: 'Failed' } });
    // OnDelete: a failed pod is recreated from the update revision, which the policy refuses.
    for (let i = 0; i < 3; i++) await s.step();
    expect(s.cluster.podDeletions).toEqual([]);
    expect(s.cluster.pods.get(`${NS}/web-1`)?.metadata.uid).toBe(pod.metadata.uid);
    expect(condition(s, ConditionType.rolloutHeld)).toMatchObject({ status: 'True' });
  });

  it('a missing claim the cluster would refuse holds the rollout too; existing claims are not checked again', async () => {
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const s = await converged({
      replicas: 2,
      volumeClaimTemplates: [claim],
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
    });
    s.cluster.admission = (obj) => (obj.kind === 'PersistentVolumeClaim' ? denied : undefined);
    // The claim of web-1 is gone (e.g. deleted by hand and released): its replacement would need a new one.
    s.cluster.claims.delete(`${NS}/data-web-1`);
    s.edit(template({}, 'registry.example/web:v2'));
    for (let i = 0; i < 3; i++) await s.step();
    expect(s.cluster.podDeletions).toEqual([]);
    expect(condition(s, ConditionType.rolloutHeld)).toMatchObject({ status: 'True' });
    expect(s.cluster.calls.count('claims.dryRun')).toBeGreaterThan(0);
  });

  it('claims that exist cost no dry run', async () => {
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const s = await converged({
      replicas: 2,
      volumeClaimTemplates: [claim],
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
    });
    s.edit(template({}, 'registry.example/web:v2'));
    await s.runUntil((x) => x.converged() && x.cluster.podDeletions.length === 2);
    expect(s.cluster.calls.count('claims.dryRun')).toBe(0);
    expect(s.cluster.calls.count('pods.dryRun')).toBe(1);
  });
});
