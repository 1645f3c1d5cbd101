/**
 * Scenario tests of the executor's failure handling: injected apiserver errors, stale reads racing each
 * other, and specs the apiserver rejects.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { pino } from 'pino';
import { execute } from '../../../src/workers/app/executor.ts';
import { readObserved } from '../../../src/workers/app/read.ts';
import { planned } from './fixtures.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

const silent = pino({ level: 'silent' });
const condition = (s: Scenario, type: string) => s.app().status?.conditions?.find((c) => c.type === type);

describe('failures', () => {
  it('a failed pod create sets FailedCreatePod and an Event, throws for a retry, and the retry clears it', async () => {
    const s = new Scenario({ replicas: 2, podManagementPolicy: 'Parallel' });
    s.cluster.calls.failNth('pods.create', 1, new KubeError('ServerError', 500, 'POST pods: etcd timeout'));
    await expect(s.reconcile()).rejects.toMatchObject({ code: 'ServerError' });
    expect(condition(s, ConditionType.failedCreatePod)).toMatchObject({ status: 'True', reason: 'CreatePodRetrying' });
    expect(s.cluster.events.map((e) => e.event.reason)).toContain(EventReason.failedCreate);
    await s.runUntil((x) => x.converged());
    expect(condition(s, ConditionType.failedCreatePod)).toMatchObject({ status: 'False', reason: 'PodsCreated' });
  });

  it('a pod the apiserver rejects as invalid → InvalidSpec, no error, no retry until the spec changes', async () => {
    const s = new Scenario({ replicas: 2 });
    s.cluster.calls.failNth(
      'pods.create',
      1,
      new KubeError('Invalid', 422, 'Pod "web-0" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0'),
    );
    const result = await s.reconcile();
    expect(result).toBeDefined();
    expect(condition(s, ConditionType.invalidSpec)).toMatchObject({ status: 'True', reason: 'SpecInvalid', observedGeneration: 1 });
    const creates = s.cluster.calls.count('pods.create');
    const statusWrites = s.cluster.calls.count('apps.patchStatus');
    for (let i = 0; i < 5; i++) await s.step();
    expect(s.cluster.calls.count('pods.create')).toBe(creates);
    expect(s.cluster.calls.count('apps.patchStatus')).toBe(statusWrites);
    s.edit({ template: { metadata: { annotations: { fixed: 'yes' } } } });
    await s.runUntil((x) => x.converged());
    expect(condition(s, ConditionType.invalidSpec)).toMatchObject({ status: 'False', reason: 'SpecValid' });
  });

  it('a revision the apiserver rejects as invalid → InvalidSpec and a FailedCreate Event, not retried', async () => {
    const s = new Scenario({ replicas: 1 });
    s.cluster.calls.failNth('revisions.create', 1, new KubeError('Invalid', 422, 'ControllerRevision "web-1" is invalid: metadata.labels: Invalid value'));
    const failed = await s.reconcile().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toMatchObject({ code: 'Invalid', retryClass: 'permanent' });
    expect(condition(s, ConditionType.invalidSpec)).toMatchObject({ status: 'True', reason: 'SpecInvalid' });
    expect(condition(s, ConditionType.invalidSpec)?.message).toContain('metadata.labels: Invalid value');
    expect(s.cluster.events.map((e) => e.event.reason)).toContain(EventReason.failedCreate);
    expect(s.pods()).toEqual([]);
  });

  it('two workers acting on the same stale read: creates are idempotent, deletes are UID-guarded', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy: 'Parallel' });
    const client = s.cluster.client();
    const observed = (await readObserved(client, NS, 'web'))!;
    const p = planned(observed, s.clock.now());
    await execute(p, observed.app, { client, log: silent, now: s.clock.now });
    // The second worker's status write is based on the old resourceVersion: Conflict, for a retry.
    await expect(execute(p, observed.app, { client, log: silent, now: s.clock.now })).rejects.toMatchObject({ code: 'Conflict' });
    expect(s.pods()).toHaveLength(3);
    await s.runUntil((x) => x.converged());
    // A delete planned against a pod that was since replaced does not touch the new pod.
    const stale = s.cluster.pods.get(`${NS}/web-2`)!;
    await client.pods.delete(NS, 'web-2', stale.metadata.uid);
    await s.runUntil((x) => x.converged() && x.cluster.pods.get(`${NS}/web-2`)!.metadata.uid !== stale.metadata.uid);
    await expect(client.pods.delete(NS, 'web-2', stale.metadata.uid)).rejects.toMatchObject({ code: 'Conflict' });
    expect(s.violations).toEqual([]);
  });

  it('a selector that does not match the template → InvalidSpec and one Event, nothing created', async () => {
    const s = new Scenario({ replicas: 2, selector: { matchLabels: { app: 'other' } } });
    for (let i = 0; i < 3; i++) await s.step();
    expect(s.pods()).toEqual([]);
    expect(condition(s, ConditionType.invalidSpec)).toMatchObject({ status: 'True', reason: 'SpecInvalid' });
    expect(s.cluster.events.filter((e) => e.event.reason === EventReason.invalidSpec)).toHaveLength(1);
  });

  it('a revision name taken by different data raises the collision count and retries', async () => {
    const s = new Scenario({ replicas: 1 });
    const client = s.cluster.client();
    const observed = (await readObserved(client, NS, 'web'))!;
    const p = planned(observed, s.clock.now());
    const create = p.actions.find((a) => a.kind === 'createRevision');
    if (create?.kind !== 'createRevision') throw new Error('expected a createRevision action');
    await client.revisions.create(NS, {
      ...create.revision,
      data: { spec: { template: { spec: { containers: [] } } } },
      metadata: { ...create.revision.metadata, ownerReferences: [] },
    });
    await expect(execute(p, observed.app, { client, log: silent, now: s.clock.now })).rejects.toMatchObject({ code: 'Conflict' });
    expect(s.app().status?.collisionCount).toBe(1);
    await s.runUntil((x) => x.converged());
    expect(s.app().status?.updateRevision).not.toBe(create.revision.metadata.name);
  });

  it('a lost Event never fails the reconcile', async () => {
    const s = new Scenario({ replicas: 1 });
    s.cluster.calls.failNth('events.record', 1, new KubeError('Forbidden', 403, 'events is forbidden'));
    await s.runUntil((x) => x.converged());
    expect(s.pods()).toHaveLength(1);
  });

  it('adopts an orphan pod named like one of its own instead of creating another', async () => {
    const s = new Scenario({ replicas: 1 });
    await s.runUntil((x) => x.converged());
    const pod = s.cluster.pods.get(`${NS}/web-0`)!;
    s.cluster.pods.set(`${NS}/web-0`, { ...pod, metadata: { ...pod.metadata, ownerReferences: [] } });
    await s.step();
    expect(s.cluster.pods.get(`${NS}/web-0`)!.metadata.uid).toBe(pod.metadata.uid);
    expect(s.cluster.pods.get(`${NS}/web-0`)!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', controller: true })]);
  });

  it('never touches a pod controlled by someone else', async () => {
    const s = new Scenario({ replicas: 1 });
    await s.runUntil((x) => x.converged());
    const pod = s.cluster.pods.get(`${NS}/web-0`)!;
    const foreign = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'other', controller: true }];
    s.cluster.pods.set(`${NS}/web-0`, { ...pod, metadata: { ...pod.metadata, ownerReferences: foreign } });
    s.edit({ replicas: 0 });
    for (let i = 0; i < 3; i++) await s.step();
    expect(s.cluster.pods.get(`${NS}/web-0`)?.metadata.ownerReferences).toEqual(foreign);
    expect(s.cluster.podDeletions).toEqual([]);
  });
});
