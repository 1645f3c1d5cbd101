/**
 * On the sandbox: reserved ordinals (`spec.reserveOrdinals`), the specified-delete label and the scale-up limit
 * (`spec.scaleStrategy.maxUnavailable`), with the real watcher and worker, the apiserver's admission, the
 * garbage collector and the simulated kubelets.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import { SPECIFIED_DELETE_LABEL } from '../../../src/api/specified-delete.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { isRunningAndAvailable } from '../../../src/workers/app/pods/predicates.ts';
import { rejection, sandbox } from '../support.ts';
import { claimsIn, createApp, eventsOf, getApp, patchApp, podsOf, revisionOf, settled, template, uniqueName, until, useController } from './harness.ts';

const ctl = useController('adv-ord');
const claims = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
const HOLD = 'ebb.test/hold';

const podNames = (pods: Pod[]): string => pods.map((p) => p.metadata.name).join(',');
const live = (pods: Pod[]): Pod[] => pods.filter((p) => !p.metadata.deletionTimestamp);
const uidOf = (pods: Pod[], name: string): string | undefined => pods.find((p) => p.metadata.name === name)?.metadata.uid;
const patchPod = (name: string, body: unknown) => sandbox().rest.patch<Pod>(core('pods', ctl.ns, name), body, PatchType.merge);
const label = (name: string) => patchPod(name, { metadata: { labels: { [SPECIFIED_DELETE_LABEL]: 'true' } } });
const eventually = <T>(check: () => Promise<T | undefined>, what: string): Promise<T> => waitFor(check, { timeoutMs: 60_000, intervalMs: 200, what });

describe('reserved ordinals', () => {
  it('replicas counts the pods that run: replicas 4 with [1] runs 0, 2, 3, 4; a reservation above replicas changes nothing', async () => {
    const name = uniqueName('rsv');
    await createApp(ctl.ns, name, { replicas: 4, podManagementPolicy: 'Parallel', reserveOrdinals: [1, 9] });
    const s = await settled(ctl.ns, name);
    expect(podNames(s.pods)).toBe(`${name}-0,${name}-2,${name}-3,${name}-4`);
    expect(s.app.status).toMatchObject({ replicas: 4, readyReplicas: 4, availableReplicas: 4, updatedReplicas: 4 });
  });

  it('reserving the ordinal of a running pod moves it out without renumbering; its claim follows whenScaled', async () => {
    const name = uniqueName('mv');
    await createApp(ctl.ns, name, {
      replicas: 3,
      volumeClaimTemplates: claims,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
    });
    const before = await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { reserveOrdinals: [1] });
    const after = await until(ctl.ns, name, (s) => podNames(s.pods) === `${name}-0,${name}-2,${name}-3` && s.app.status?.readyReplicas === 3, {
      what: 'pod 1 replaced by pod 3',
    });
    expect(uidOf(after.pods, `${name}-0`)).toBe(uidOf(before.pods, `${name}-0`));
    expect(uidOf(after.pods, `${name}-2`)).toBe(uidOf(before.pods, `${name}-2`));
    expect(after.app.status?.replicas).toBe(3);
    const deletes = await eventsOf(ctl.ns, name, EventReason.successfulDelete);
    expect(deletes.map((e) => e.note)).toEqual([expect.stringContaining(`${name}-1`)]);
    expect(deletes[0]?.note).toContain('reserved ordinal');
    await eventually(async () => {
      const names = (await claimsIn(ctl.ns)).filter((c) => !c.metadata.deletionTimestamp && c.metadata.name?.endsWith(`${name}-1`));
      return names.length === 0 ? true : undefined;
    }, 'the reserved pod’s claim deleted (whenScaled: Delete)');
  });

  it('overlapping ranges reserve their union, with ordinals.start; a backwards range is refused at admission', async () => {
    const name = uniqueName('ovl');
    await createApp(ctl.ns, name, { replicas: 2, podManagementPolicy: 'Parallel', ordinals: { start: 3 }, reserveOrdinals: ['3-5', '4-6'] });
    const s = await settled(ctl.ns, name);
    expect(podNames(s.pods)).toBe(`${name}-7,${name}-8`);
    const err = await rejection(createApp(ctl.ns, uniqueName('bad'), { reserveOrdinals: ['7-5'] }));
    expect(err.message).toContain('must not end before it starts');
    const err2 = await rejection(createApp(ctl.ns, uniqueName('bad'), { reserveOrdinals: ['x'] }));
    expect(err2.message).toContain('range "first-last"');
  });
});

describe('specified-delete label', () => {
  it('a labelled pod below the partition is recreated with its identity, its revision, and without the label', async () => {
    const name = uniqueName('sd');
    await createApp(ctl.ns, name, { replicas: 3, podManagementPolicy: 'Parallel' });
    const v1 = (await settled(ctl.ns, name)).app.status?.currentRevision;
    // A new template held back entirely by the partition: new pods below it still come from v1.
    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { rollingUpdate: { partition: 3 } } });
    await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === s.app.metadata.generation, { what: 'v2 observed' });
    const old = uidOf(await podsOf(ctl.ns, name), `${name}-0`);
    await label(`${name}-0`);
    const s = await until(
      ctl.ns,
      name,
      (x) => {
        const p = x.pods.find((q) => q.metadata.name === `${name}-0`);
        return p !== undefined && p.metadata.uid !== old && isRunningAndAvailable(p, 0, new Date());
      },
      { what: 'pod 0 recreated' },
    );
    const pod = s.pods.find((q) => q.metadata.name === `${name}-0`);
    expect(pod && revisionOf(pod)).toBe(v1);
    expect(pod?.metadata.labels?.[SPECIFIED_DELETE_LABEL]).toBeUndefined();
    const deletes = await eventsOf(ctl.ns, name, EventReason.successfulDelete);
    expect(deletes.map((e) => e.note)).toEqual([expect.stringContaining('specified-delete label')]);
  });

  it('two labelled pods with maxUnavailable 1: one at a time, the other shown waiting', async () => {
    const name = uniqueName('sd2');
    await createApp(ctl.ns, name, { replicas: 3, podManagementPolicy: 'Parallel', minReadySeconds: 2 });
    const before = (await settled(ctl.ns, name, undefined, 60_000)).pods;
    await Promise.all([label(`${name}-1`), label(`${name}-2`)]);
    let peak = 0;
    await until(
      ctl.ns,
      name,
      (s) =>
        live(s.pods).length === 3 &&
        [1, 2].every((o) => uidOf(s.pods, `${name}-${o}`) !== uidOf(before, `${name}-${o}`)) &&
        s.app.status?.availableReplicas === 3,
      { what: 'both recreated', onEach: (s) => (peak = Math.max(peak, 3 - live(s.pods).filter((p) => isRunningAndAvailable(p, 2, new Date())).length)) },
    );
    expect(peak).toBe(1);
    const waiting = await eventsOf(ctl.ns, name, EventReason.specifiedDeletePending);
    expect(waiting.length).toBeGreaterThanOrEqual(1);
    expect(waiting[0]?.note).toContain('maxUnavailable 1 reached');
  });

  it('a label on a pod already terminating: no second delete; its replacement comes without the label', async () => {
    const name = uniqueName('sdt');
    await createApp(ctl.ns, name, { replicas: 2, podManagementPolicy: 'Parallel' });
    await settled(ctl.ns, name);
    const target = `${name}-1`;
    await patchPod(target, { metadata: { finalizers: [HOLD] } });
    await sandbox().rest.delete(core('pods', ctl.ns, target));
    const old = await label(target);
    expect(old.metadata.deletionTimestamp).toBeDefined();
    // Several reconciles while it hangs on the finalizer (the label change is a pod event of its own).
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await eventsOf(ctl.ns, name, EventReason.successfulDelete)).toEqual([]);
    expect(await eventsOf(ctl.ns, name, EventReason.failedDelete)).toEqual([]);
    expect((await podsOf(ctl.ns, name)).find((p) => p.metadata.name === target)?.metadata.uid).toBe(old.metadata.uid);
    await patchPod(target, { metadata: { finalizers: null } });
    const s = await until(ctl.ns, name, (x) => uidOf(x.pods, target) !== undefined && uidOf(x.pods, target) !== old.metadata.uid, { what: 'replacement' });
    expect(s.pods.find((p) => p.metadata.name === target)?.metadata.labels?.[SPECIFIED_DELETE_LABEL]).toBeUndefined();
    await settled(ctl.ns, name);
  });

  it('the label in the template is refused at admission', async () => {
    const name = uniqueName('sdtpl');
    const t = template(name, 'v1');
    const err = await rejection(createApp(ctl.ns, name, { template: { ...t, metadata: { labels: { app: name, [SPECIFIED_DELETE_LABEL]: 'true' } } } }));
    expect(err.message).toContain(`must not carry ${SPECIFIED_DELETE_LABEL}`);
  });
});

describe('scaleStrategy.maxUnavailable', () => {
  it('scale-up creates pods only while fewer than the limit are unavailable, and says so', async () => {
    const name = uniqueName('lim');
    await createApp(ctl.ns, name, { replicas: 1, podManagementPolicy: 'Parallel', minReadySeconds: 2, scaleStrategy: { maxUnavailable: 2 } });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { replicas: 7 });
    let peak = 0;
    let sawLimited = false;
    await until(ctl.ns, name, (s) => live(s.pods).length === 7 && s.app.status?.availableReplicas === 7, {
      timeoutMs: 90_000,
      what: 'scaled to 7',
      onEach: (s) => {
        peak = Math.max(peak, live(s.pods).filter((p) => !isRunningAndAvailable(p, 2, new Date())).length);
        const progressing = s.app.status?.conditions?.find((c) => c.type === ConditionType.progressing);
        if (progressing?.reason === Reason.scaleUpLimited) sawLimited = true;
      },
    });
    expect(peak).toBeLessThanOrEqual(2);
    expect(peak).toBeGreaterThanOrEqual(1);
    expect(sawLimited).toBe(true);
    expect((await eventsOf(ctl.ns, name, EventReason.scaleUpLimited)).length).toBeGreaterThanOrEqual(1);
    const done = await getApp(ctl.ns, name);
    expect(done.status?.conditions?.find((c) => c.type === ConditionType.progressing)?.reason).toBe(Reason.rolloutComplete);
  });

  it('with OrderedReady it is refused at admission, with a message', async () => {
    const err = await rejection(createApp(ctl.ns, uniqueName('lim-o'), { scaleStrategy: { maxUnavailable: 1 } }));
    expect(err.message).toContain('scaleStrategy.maxUnavailable requires podManagementPolicy: Parallel');
    const err2 = await rejection(createApp(ctl.ns, uniqueName('lim-z'), { podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 0 } }));
    expect(err2.message).toContain('at least 1');
  });
});
