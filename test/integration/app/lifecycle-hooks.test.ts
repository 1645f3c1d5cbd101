/**
 * Lifecycle hooks on the sandbox with the real watcher and worker: the test plays the traffic manager, removing
 * (and putting back) the labels the hooks wait on. Scale-down and recreation wait on preDelete, an in-place
 * update waits on inPlaceUpdate and comes back through preNormal, markPodNotReady sets the pod condition
 * False before the wait, a hook nobody answers shows in the LifecycleHookWaiting condition and an Event, a hook
 * cleared while paused acts only after resume, and an App deleted while a hook is pending goes away.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { appRef } from '../../../src/api/group.ts';
import { ConditionType, EventReason, LIFECYCLE_STATE_LABEL, POD_CONDITION_LIFECYCLE_READY, Reason } from '../../../src/api/keys.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { createApp, eventsOf, getApp, image, patchApp, podsOf, settled, uniqueName, until, useController, type Snapshot } from './harness.ts';
import { sandbox } from '../support.ts';

const ctl = useController('app-hooks');

const TRAFFIC = 'traffic.example.com/serving';
const REGISTER = 'traffic.example.com/register';

const appTemplate = (name: string, tag: string): AppSpec['template'] => ({
  metadata: { labels: { app: name, [TRAFFIC]: 'yes' } },
  spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
});

const stateOf = (p: Pod | undefined): string | undefined => p?.metadata.labels?.[LIFECYCLE_STATE_LABEL];
const readyOf = (p: Pod | undefined) => p?.status?.conditions?.find((c) => c.type === POD_CONDITION_LIFECYCLE_READY);
const podNamed = (s: Snapshot, name: string): Pod | undefined => s.pods.find((p) => p.metadata.name === name);
const hookCondition = (s: Snapshot) => s.app.status?.conditions?.find((c) => c.type === ConditionType.lifecycleHookWaiting);

/** Plays the owner of a handler: sets (a value) or removes (null) pod labels; `finalizers: null` drops them all. */
async function labelPod(name: string, labels: Record<string, string | null>, finalizers?: null): Promise<void> {
  const metadata = finalizers === null ? { labels, finalizers } : { labels };
  await sandbox().rest.patch(core('pods', ctl.ns, name), { metadata }, PatchType.merge);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('lifecycle hooks with the watcher and worker', () => {
  it('admission refuses a hook without handlers', async () => {
    const err: unknown = await createApp(ctl.ns, uniqueName('hk'), { lifecycle: { preDelete: { markPodNotReady: true } } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isKubeError(err, 'Invalid')).toBe(true);
    expect(String(err)).toContain('a lifecycle hook needs at least one entry in labelsHandler or finalizersHandler');
  });

  it('scale-down waits on preDelete: PreparingDelete with the condition False first, deleted once the label is removed', async () => {
    const name = uniqueName('hk');
    await createApp(ctl.ns, name, {
      replicas: 2,
      template: appTemplate(name, 'v1'),
      lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' }, markPodNotReady: true } },
    });
    const before = await settled(ctl.ns, name);
    expect(before.pods.map(stateOf)).toEqual(['Normal', 'Normal']);
    const uid = podNamed(before, `${name}-1`)?.metadata.uid;

    await patchApp(ctl.ns, name, { replicas: 1 });
    const waiting = await until(ctl.ns, name, (s) => stateOf(podNamed(s, `${name}-1`)) === 'PreparingDelete' && hookCondition(s)?.status === 'True');
    // The state and the condition come in one write: the condition is False as soon as the state is there.
    expect(readyOf(podNamed(waiting, `${name}-1`))).toMatchObject({ status: 'False', reason: Reason.preparingDelete });
    expect(hookCondition(waiting)).toMatchObject({ reason: Reason.waitingForPreDelete });
    expect(hookCondition(waiting)?.message).toContain(`${name}-1 on preDelete for less than 30s`);

    // Nobody removed the label: the pod stays.
    await sleep(3_000);
    const still = (await podsOf(ctl.ns, name)).find((p) => p.metadata.name === `${name}-1`);
    expect(still?.metadata).toMatchObject({ uid });
    expect(still?.metadata.deletionTimestamp).toBeUndefined();

    await labelPod(`${name}-1`, { [TRAFFIC]: null });
    const after = await until(ctl.ns, name, (s) => s.pods.length === 1 && hookCondition(s)?.status === 'False');
    expect(after.pods.map((p) => p.metadata.name)).toEqual([`${name}-0`]);
    expect(hookCondition(after)).toMatchObject({ reason: Reason.noHookPending });
  });

  it('recreation waits on preDelete; a hook cleared while paused deletes nothing until the rollout resumes', async () => {
    const name = uniqueName('hk');
    await createApp(ctl.ns, name, { replicas: 1, template: appTemplate(name, 'v1'), lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' } } } });
    const before = await settled(ctl.ns, name);
    const uid = before.pods[0]?.metadata.uid;

    await patchApp(ctl.ns, name, { template: appTemplate(name, 'v2') });
    await until(ctl.ns, name, (s) => stateOf(s.pods[0]) === 'PreparingDelete' && hookCondition(s)?.status === 'True');
    // Waiting on the label: the old pod stays.
    await sleep(2_000);
    expect((await podsOf(ctl.ns, name)).map((p) => [p.metadata.uid, p.metadata.deletionTimestamp])).toEqual([[uid, undefined]]);
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: true } } });
    await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === s.app.metadata.generation);
    await labelPod(`${name}-0`, { [TRAFFIC]: null });

    // Cleared, but paused: the pod is neither deleted nor reported as waiting on its hook.
    const held = await until(ctl.ns, name, (s) => hookCondition(s)?.status === 'False');
    await sleep(3_000);
    const pods = await podsOf(ctl.ns, name);
    expect(pods.map((p) => [p.metadata.uid, p.metadata.deletionTimestamp, stateOf(p)])).toEqual([[uid, undefined, 'PreparingDelete']]);
    expect(held.app.status?.conditions?.find((c) => c.type === ConditionType.paused)?.status).toBe('True');

    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    const after = await settled(ctl.ns, name);
    expect(after.pods[0]?.metadata.uid).not.toBe(uid);
    expect(after.pods[0]?.spec?.containers[0]?.image).toBe(image('v2'));
    expect(stateOf(after.pods[0])).toBe('Normal');
    expect(after.pods[0]?.metadata.labels?.[TRAFFIC]).toBe('yes');
  });

  /** A new pod starts PreparingNormal with the preNormal label and finalizer armed; removing both makes it Normal. Its UID. */
  async function armedUntilAnswered(name: string, pod: string): Promise<string | undefined> {
    const created = await until(ctl.ns, name, (s) => stateOf(s.pods[0]) === 'PreparingNormal' && hookCondition(s)?.reason === Reason.waitingForPreNormal);
    expect(created.pods[0]?.metadata.labels?.[REGISTER]).toBe('pending');
    expect(created.pods[0]?.metadata.finalizers).toEqual([REGISTER]);
    await labelPod(pod, { [REGISTER]: null });
    // One handler left (the finalizer): still PreparingNormal.
    await sleep(1_500);
    expect(stateOf((await podsOf(ctl.ns, name))[0])).toBe('PreparingNormal');
    await labelPod(pod, {}, null);
    const before = await settled(ctl.ns, name);
    expect(stateOf(before.pods[0])).toBe('Normal');
    return before.pods[0]?.metadata.uid;
  }

  it('in place: waits on inPlaceUpdate (condition False first), updates, comes back to Normal through preNormal', async () => {
    const name = uniqueName('hk');
    await createApp(ctl.ns, name, {
      replicas: 1,
      template: appTemplate(name, 'v1'),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
      lifecycle: {
        inPlaceUpdate: { labelsHandler: { [TRAFFIC]: 'yes' }, markPodNotReady: true },
        preNormal: { labelsHandler: { [REGISTER]: 'pending' }, finalizersHandler: [REGISTER] },
      },
    });
    const pod = `${name}-0`;
    const uid = await armedUntilAnswered(name, pod);

    await patchApp(ctl.ns, name, { template: appTemplate(name, 'v2') });
    const preparing = await until(ctl.ns, name, (s) => stateOf(s.pods[0]) === 'PreparingUpdate' && hookCondition(s)?.status === 'True');
    expect(readyOf(preparing.pods[0])).toMatchObject({ status: 'False', reason: Reason.preparingUpdate });
    expect(hookCondition(preparing)).toMatchObject({ status: 'True', reason: Reason.waitingForInPlaceUpdate });
    await sleep(2_000);
    expect((await podsOf(ctl.ns, name))[0]?.spec?.containers[0]?.image).toBe(image('v1'));

    await labelPod(pod, { [TRAFFIC]: null });
    const updated = await until(ctl.ns, name, (s) => stateOf(s.pods[0]) === 'PreparingNormal');
    expect(updated.pods[0]?.metadata.uid).toBe(uid);
    expect(updated.pods[0]?.spec?.containers[0]?.image).toBe(image('v2'));
    expect(updated.pods[0]?.metadata.labels?.[REGISTER]).toBe('pending');
    expect(updated.pods[0]?.metadata.finalizers).toEqual([REGISTER]);
    expect(readyOf(updated.pods[0])).toMatchObject({ status: 'True', reason: Reason.backInService });

    // The traffic manager puts the pod back and says so.
    await labelPod(pod, { [REGISTER]: null, [TRAFFIC]: 'yes' }, null);
    const after = await settled(ctl.ns, name);
    expect(after.pods[0]?.metadata.uid).toBe(uid);
    expect(stateOf(after.pods[0])).toBe('Normal');
    expect(hookCondition(after)).toMatchObject({ status: 'False' });
  });

  it('a hook nobody answers shows in the condition and an Event with how long; the App is deleted while it waits', async () => {
    const name = uniqueName('hk');
    await createApp(ctl.ns, name, { replicas: 2, template: appTemplate(name, 'v1'), lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' } } } });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { replicas: 1 });
    const late = await until(ctl.ns, name, (s) => hookCondition(s)?.message.includes(`${name}-1 on preDelete for over 30s`) === true, { timeoutMs: 60_000 });
    expect(hookCondition(late)).toMatchObject({ status: 'True', reason: Reason.waitingForPreDelete });
    const events = await waitFor(
      async () => {
        const list = await eventsOf(ctl.ns, name, EventReason.lifecycleHookWaiting);
        return list.some((e) => e.type === 'Warning' && e.note.includes(`${name}-1 on preDelete for over 30s`)) ? list : undefined;
      },
      { timeoutMs: 10_000, what: 'the LifecycleHookWaiting Warning Event' },
    );
    expect(events.some((e) => e.type === 'Normal' && e.note.includes(`${name}-1 on preDelete for less than 30s`))).toBe(true);
    expect(late.pods.map((p) => p.metadata.name)).toEqual([`${name}-0`, `${name}-1`]);

    await sandbox().rest.delete(appRef(ctl.ns, name));
    await waitFor(
      async () => {
        const gone = await getApp(ctl.ns, name).then(
          () => false,
          (err: unknown) => isKubeError(err, 'NotFound'),
        );
        return gone && (await podsOf(ctl.ns, name)).length === 0 ? true : undefined;
      },
      { timeoutMs: 60_000, what: `App ${name} and its pods gone` },
    );
  });
});
