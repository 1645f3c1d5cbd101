/**
 * On the sandbox: a bad edit never costs a running pod. A template the cluster's admission refuses (a
 * ValidatingAdmissionPolicy made here) holds the rollout with every pod running, and fixing it completes the
 * rollout; a namespace quota that refuses the App's pods heals by itself once raised, within one backoff step.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { sandbox } from '../support.ts';
import { createApp, eventsOf, getApp, image, isSettled, podsOf, settled, uniqueName, until, useController } from './harness.ts';
import { refusePodsLabelled as refuse } from './refuse-pods.ts';

const refusePodsLabelled = (ns: string, label: string): Promise<string> => refuse(ns, label, cleanups);

/** The retry backoff of this file's worker: its cap is the "one backoff step" the quota must heal within. */
const BACKOFF_MAX_MS = 4_000;
const ctl = useController('adm', { env: { EBB_QUEUE_BACKOFF_BASE: '500ms', EBB_QUEUE_BACKOFF_MAX: `${BACKOFF_MAX_MS}ms` } });

const scheduling = (name?: string) => ({ group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', name });
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean().catch(() => undefined);
});

const condition = async (ns: string, name: string, type: string) => (await getApp(ns, name)).status?.conditions?.find((c) => c.type === type);

/** The value of printer column `column` for App `name`, as `kubectl get ebapp` receives it (a Table). */
async function printedColumn(ns: string, name: string, column: string): Promise<unknown> {
  const table = await sandbox().rest.request<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>(
    'GET',
    `/apis/apps.ebb.dev/v1alpha1/namespaces/${ns}/apps/${name}`,
    { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  );
  const index = table.columnDefinitions.findIndex((c) => c.name === column);
  return index < 0 ? `no column ${column}` : table.rows[0]?.cells[index];
}

const recreate = (extra: Record<string, unknown> = {}): Partial<AppSpec> => ({
  podManagementPolicy: 'Parallel',
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate', maxUnavailable: '50%', ...extra } },
});

const withLabel = (name: string, value: string, tag: string) => ({
  template: {
    metadata: { labels: { app: name, 'ebb-test/blocked': value } },
    spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
  },
});

describe('a template the cluster admission refuses', () => {
  it('holds the rollout with every pod running and the message on the App; fixing the template completes it', async () => {
    const name = uniqueName('held');
    const policy = await refusePodsLabelled(ctl.ns, 'ebb-test/blocked');
    await createApp(ctl.ns, name, { ...recreate(), replicas: 4, ...withLabel(name, 'no', 'v1') });
    const before = await settled(ctl.ns, name);
    const uids = before.pods.map((p) => p.metadata.uid);

    await sandbox().rest.patch(
      { group: 'apps.ebb.dev', version: 'v1alpha1', resource: 'apps', namespace: ctl.ns, name },
      { spec: withLabel(name, 'yes', 'v2') },
      PatchType.merge,
    );
    const held = await until(ctl.ns, name, (s) => s.app.status?.conditions?.some((c) => c.type === ConditionType.rolloutHeld && c.status === 'True') === true, {
      what: 'RolloutHeld',
      onEach: (s) => expect(s.pods.map((p) => p.metadata.uid)).toEqual(uids),
    });
    const message = held.app.status?.conditions?.find((c) => c.type === ConditionType.rolloutHeld)?.message ?? '';
    expect(message).toContain(policy);
    expect(message).toContain(held.app.status?.updateRevision ?? 'no update revision');
    // Held, and stays so: nothing is deleted, every pod is still ready.
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await podsOf(ctl.ns, name);
    expect(after.map((p) => p.metadata.uid)).toEqual(uids);
    expect(after.every((p) => !p.metadata.deletionTimestamp)).toBe(true);
    expect(await eventsOf(ctl.ns, name, EventReason.rolloutHeld)).toHaveLength(1);
    // What `kubectl get ebapp` prints: the HELD column.
    expect(await printedColumn(ctl.ns, name, 'Held')).toBe('True');

    await sandbox().rest.patch(
      { group: 'apps.ebb.dev', version: 'v1alpha1', resource: 'apps', namespace: ctl.ns, name },
      { spec: withLabel(name, 'no', 'v3') },
      PatchType.merge,
    );
    const done = await until(ctl.ns, name, (s) => isSettled(s) && s.pods.every((p) => p.spec?.containers[0]?.image === image('v3')), {
      what: 'rollout after the fix',
      timeoutMs: 90_000,
    });
    expect(done.app.status?.conditions?.find((c) => c.type === ConditionType.rolloutHeld)).toMatchObject({ status: 'False' });
  });
});

describe('a namespace quota', () => {
  it('refuses the pods visibly, and once raised the App reaches its replicas within one backoff step, without an edit', async () => {
    const { rest } = sandbox();
    const name = uniqueName('quota');
    // The quota counts only pods of this PriorityClass, so other tests' pods in the namespace do not use it up.
    const priorityClass = uniqueName('ebb-test-quota');
    await rest.create(scheduling(), { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: priorityClass }, value: 1000 });
    cleanups.push(() => rest.delete(scheduling(priorityClass)));
    const quotaRef = core('resourcequotas', ctl.ns, name);
    await rest.create(core('resourcequotas', ctl.ns), {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name },
      spec: { hard: { pods: '2' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [priorityClass] }] } },
    });
    await waitFor(async () => ((await rest.get<{ status?: { hard?: Record<string, string> } }>(quotaRef)).status?.hard?.['pods'] === '2' ? true : undefined), {
      timeoutMs: 30_000,
      what: 'quota status',
    });

    await createApp(ctl.ns, name, {
      podManagementPolicy: 'Parallel',
      replicas: 3,
      template: {
        metadata: { labels: { app: name } },
        spec: { priorityClassName: priorityClass, containers: [{ name: 'main', image: image('v1') }], terminationGracePeriodSeconds: 1 },
      },
    });
    await waitFor(
      async () => {
        const c = await condition(ctl.ns, name, ConditionType.failedCreatePod);
        return c?.status === 'True' && c.reason === 'CreatePodRetrying' ? c : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'FailedCreatePod CreatePodRetrying' },
    );
    expect((await condition(ctl.ns, name, ConditionType.failedCreatePod))?.message).toContain('exceeded quota');
    // Long enough for the backoff to reach its cap.
    await new Promise((r) => setTimeout(r, 2 * BACKOFF_MAX_MS));
    expect(await podsOf(ctl.ns, name)).toHaveLength(2);

    await rest.patch(quotaRef, { spec: { hard: { pods: '3' } } }, PatchType.merge);
    // Admission enforces the quota's status: the clock starts once the quota controller has written the new
    // limit there (its delay is not ebb's), and the third pod follows within one capped backoff step.
    await waitFor(async () => ((await rest.get<{ status?: { hard?: Record<string, string> } }>(quotaRef)).status?.hard?.['pods'] === '3' ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'the raised quota in its status',
    });
    const raised = Date.now();
    await waitFor(async () => ((await podsOf(ctl.ns, name)).length === 3 ? true : undefined), { timeoutMs: 60_000, intervalMs: 100, what: 'third pod' });
    const healedMs = Date.now() - raised;
    // One backoff step (the cap), plus a reconcile and the apiserver's own time.
    expect(healedMs).toBeLessThan(BACKOFF_MAX_MS + 3_000);
    await settled(ctl.ns, name);
    expect(await condition(ctl.ns, name, ConditionType.failedCreatePod)).toMatchObject({ status: 'False' });
  });
});
