/**
 * A revert heals by itself, next to the upstream StatefulSet controller (kube-controller-manager's, in the
 * sandbox): an App and a StatefulSet of 3 replicas (OrderedReady) are updated to an image that crash-loops and
 * never becomes ready, then the template is put back. The App replaces (or updates in place) its broken pod
 * and ends with every pod Ready at the reverted revision; the StatefulSet keeps waiting for its broken pod,
 * which stays at the bad revision (kubernetes#67250).
 *
 * The sandbox's kubelet crash-loops images whose repository starts with `crashloop`: each start exits after
 * 200 ms. A startup and a readiness probe (100 ms each in the sandbox) keep such a container from ever being
 * Ready, so neither controller can see a healthy moment of the broken pod.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { sandbox } from '../support.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { createApp, getApp, image, isSettled, patchApp, revisionOf, settled, snapshot, uniqueName, useController } from './harness.ts';

const ctl = useController('revert');
const CRASHING = 'registry.example.com/team/crashloop:v2';
const statefulSets = (ns: string, name?: string): ResourceRef => ({ group: 'apps', version: 'v1', resource: 'statefulsets', namespace: ns, name });
const probe = { exec: { command: ['true'] }, periodSeconds: 1 };

function probed(name: string, ref: string): NonNullable<AppSpec['template']> {
  return {
    metadata: { labels: { app: name } },
    spec: { containers: [{ name: 'main', image: ref, startupProbe: probe, readinessProbe: probe }], terminationGracePeriodSeconds: 1 },
  };
}

interface StatefulSet {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; updateRevision?: string; currentRevision?: string; readyReplicas?: number };
}

const getSts = (name: string): Promise<StatefulSet> => sandbox().rest.get<StatefulSet>(statefulSets(ctl.ns, name));
const patchSts = (name: string, spec: unknown): Promise<unknown> => sandbox().rest.patch(statefulSets(ctl.ns, name), { spec }, PatchType.merge);

/** The pods of App or StatefulSet `name` (both templates label them `app: <name>`). */
async function podsNamed(name: string): Promise<Pod[]> {
  return (await sandbox().rest.list<Pod>(core('pods', ctl.ns), { labelSelector: `app=${name}` })).items;
}

/** Waits for `check`; a timeout names the pods of `name` as they were last. */
async function eventually<T>(check: () => Promise<T | undefined>, what: string, name: string, timeoutMs = 90_000): Promise<T> {
  try {
    return await waitFor(check, { timeoutMs, intervalMs: 200, what });
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; pods ${summary(await podsNamed(name))}`, { cause: err });
  }
}

/** The revision a pod of either controller is at (the App's label, else the StatefulSet's). */
const revisionAt = (p: Pod): string | undefined => revisionOf(p) ?? p.metadata.labels?.['controller-revision-hash'];

/** One line per pod, for a failure message: name@revision, phase, Ready, restarts, image. */
const summary = (pods: readonly Pod[]): string =>
  pods
    .map(
      (p) =>
        `${p.metadata.name ?? ''}@${revisionAt(p) ?? ''}:${p.status?.phase ?? ''}${isRunningAndReady(p) ? '+R' : ''}` +
        `:restarts=${(p.status?.containerStatuses ?? []).map((c) => c.restartCount).join(',')}:${p.spec?.['containers']?.[0]?.image ?? ''}`,
    )
    .join(' ');

/** A pod at `revision` that has crashed at least once and is not Ready. */
const crashLooping = (pods: readonly Pod[], revision: string): Pod | undefined =>
  pods.find(
    (p) =>
      revisionAt(p) === revision &&
      !p.metadata.deletionTimestamp &&
      !isRunningAndReady(p) &&
      (p.status?.containerStatuses ?? []).some((c) => (c.restartCount ?? 0) >= 1),
  );

describe.each(['ReCreate', 'InPlaceIfPossible'] as const)('a revert after a crash-looping update (%s)', (podUpdatePolicy) => {
  it('heals the App by itself, while the upstream StatefulSet stays stuck on its broken pod', async () => {
    const app = uniqueName('app');
    const sts = uniqueName('sts');
    const appSpec: Partial<AppSpec> = {
      replicas: 3,
      podManagementPolicy: 'OrderedReady',
      template: probed(app, image('v1')),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy } },
    };
    await createApp(ctl.ns, app, appSpec);
    await sandbox().rest.create(statefulSets(ctl.ns), {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: sts, namespace: ctl.ns },
      spec: { replicas: 3, selector: { matchLabels: { app: sts } }, serviceName: sts, podManagementPolicy: 'OrderedReady', template: probed(sts, image('v1')) },
    });
    const appGood = (await settled(ctl.ns, app, undefined, 90_000)).app.status?.updateRevision ?? '';
    const stsGood = await eventually(
      async () => {
        const s = await getSts(sts);
        return s.status?.readyReplicas === 3 && s.status.updateRevision === s.status.currentRevision ? s.status.updateRevision : undefined;
      },
      `StatefulSet ${sts} ready`,
      sts,
    );

    // The bad image: both controllers update their highest pod, which then crash-loops and is never Ready.
    await patchApp(ctl.ns, app, { template: probed(app, CRASHING) });
    await patchSts(sts, { template: probed(sts, CRASHING) });
    const appBad = await eventually(
      async () => {
        const rev = (await getApp(ctl.ns, app)).status?.updateRevision;
        return rev && rev !== appGood && crashLooping(await podsNamed(app), rev) ? rev : undefined;
      },
      `App ${app}: a pod crash-looping at the bad revision`,
      app,
    );
    const stsBad = await eventually(
      async () => {
        const rev = (await getSts(sts)).status?.updateRevision;
        return rev && rev !== stsGood && crashLooping(await podsNamed(sts), rev) ? rev : undefined;
      },
      `StatefulSet ${sts}: a pod crash-looping at the bad revision`,
      sts,
    );

    // The revert.
    await patchApp(ctl.ns, app, { template: probed(app, image('v1')) });
    await patchSts(sts, { template: probed(sts, image('v1')) });
    const healed = await settled(ctl.ns, app, appGood, 90_000);
    expect(isSettled(healed, appGood)).toBe(true);
    expect(healed.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v1'))).toBe(true);
    expect(appBad).not.toBe(appGood);

    // Upstream has seen the revert (its update revision is the good one again), yet its broken pod stays.
    await eventually(
      async () => {
        const s = await getSts(sts);
        return s.status?.observedGeneration === s.metadata.generation && s.status?.updateRevision === stsGood ? true : undefined;
      },
      `StatefulSet ${sts} observed the revert`,
      sts,
    );
    const stuck = (await podsNamed(sts)).filter((p) => revisionAt(p) === stsBad);
    expect(stuck.length, summary(await podsNamed(sts))).toBeGreaterThan(0);
    expect(stuck.some((p) => isRunningAndReady(p))).toBe(false);
    expect((await snapshot(ctl.ns, app)).pods.every((p) => revisionOf(p) === appGood && isRunningAndReady(p))).toBe(true);
  });
});
