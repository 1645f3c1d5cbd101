/**
 * The App lifecycle on the sandbox with the real watcher and worker: create, scale (spec and the scale
 * subresource), delete. Every assertion reads pods, revisions and status from the apiserver.
 */
import { describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { ConditionType, Label } from '../../../src/api/keys.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { sandbox } from '../support.ts';
import { createApp, getApp, patchApp, podsOf, revisionsOf, settled, uniqueName, until, useController } from './harness.ts';

const ctl = useController('app-life');

describe('App lifecycle', () => {
  it('creates 5 Running pods with their identity and reports status', async () => {
    const name = uniqueName('web');
    const app = await createApp(ctl.ns, name, { replicas: 5 });
    const s = await settled(ctl.ns, name);
    expect(s.pods.map((p) => p.metadata.name)).toEqual([0, 1, 2, 3, 4].map((i) => `${name}-${i}`));
    const [revision] = await revisionsOf(ctl.ns, name);
    expect(revision?.metadata.name).toBe(s.app.status?.updateRevision);
    expect(revision?.metadata.name).toMatch(new RegExp(`^${name}-[a-z0-9]+$`));
    expect(revision?.revision).toBe(1);
    expect(revision?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', uid: app.metadata.uid, controller: true })]);
    for (const [i, p] of s.pods.entries()) {
      expect(p.status?.phase).toBe('Running');
      expect(p.spec?.hostname).toBe(`${name}-${i}`);
      expect(p.spec?.subdomain).toBe(name);
      expect(p.metadata.labels).toMatchObject({
        [Label.app]: name,
        [Label.podIndex]: String(i),
        [Label.podName]: `${name}-${i}`,
        [Label.revision]: revision?.metadata.name,
      });
      expect(p.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'App', uid: app.metadata.uid, controller: true, blockOwnerDeletion: true })]);
    }
    expect(s.app.status).toMatchObject({
      observedGeneration: 1,
      replicas: 5,
      readyReplicas: 5,
      availableReplicas: 5,
      currentReplicas: 5,
      updatedReplicas: 5,
      updatedReadyReplicas: 5,
      collisionCount: 0,
      labelSelector: `app=${name}`,
    });
    expect(s.app.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: ConditionType.progressing, status: 'False', reason: 'RolloutComplete' }),
        expect.objectContaining({ type: ConditionType.available, status: 'True', reason: 'MinimumReplicasAvailable' }),
      ]),
    );
    const events = await sandbox().rest.list<{ reason: string; message: string }>(core('events', ctl.ns), { fieldSelector: `involvedObject.name=${name}` });
    expect(
      events.items
        .filter((e) => e.reason === 'SuccessfulCreate')
        .map((e) => e.message)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4].map((i) => `create Pod ${name}-${i} in App ${name} successful`));
  });

  it('scales to 2 through the spec and to 7 through the scale subresource', async () => {
    const name = uniqueName('scale');
    await createApp(ctl.ns, name, { replicas: 5, podManagementPolicy: 'Parallel' });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { replicas: 2 });
    const down = await settled(ctl.ns, name);
    expect(down.pods.map((p) => p.metadata.name)).toEqual([`${name}-0`, `${name}-1`]);
    const scale = await sandbox().rest.patch<{ spec: { replicas: number } }>(appRef(ctl.ns, name, 'scale'), { spec: { replicas: 7 } }, PatchType.merge);
    expect(scale.spec.replicas).toBe(7);
    const up = await settled(ctl.ns, name);
    expect(up.pods).toHaveLength(7);
    expect(up.app.status).toMatchObject({ replicas: 7, readyReplicas: 7 });
    const read = await sandbox().rest.get<{ spec: { replicas: number }; status: { replicas: number; selector: string } }>(appRef(ctl.ns, name, 'scale'));
    expect(read.status).toEqual({ replicas: 7, selector: `app=${name}` });
    expect(await revisionsOf(ctl.ns, name)).toHaveLength(1);
  });

  it('OrderedReady scale-down removes pods from the highest ordinal, one at a time', async () => {
    const name = uniqueName('ord');
    await createApp(ctl.ns, name, { replicas: 4 });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { replicas: 1 });
    let maxTerminating = 0;
    const seen: string[] = [];
    await until(ctl.ns, name, (s) => s.pods.length === 1 && s.app.status?.replicas === 1, {
      onEach: (s) => {
        const terminating = s.pods.filter((p) => p.metadata.deletionTimestamp);
        maxTerminating = Math.max(maxTerminating, terminating.length);
        for (const p of terminating) if (!seen.includes(p.metadata.name ?? '')) seen.push(p.metadata.name ?? '');
        const present = s.pods.map((p) => p.metadata.name);
        // Never a gap: pod i exists while a higher one does.
        expect(present).toEqual(present.map((_, i) => `${name}-${i}`));
      },
    });
    expect(maxTerminating).toBeLessThanOrEqual(1);
    expect(seen.length === 0 || seen[0] === `${name}-3`).toBe(true);
  });

  it('deleting the App lets the garbage collector remove its pods and revisions', async () => {
    const name = uniqueName('gone');
    await createApp(ctl.ns, name, { replicas: 2, podManagementPolicy: 'Parallel' });
    await settled(ctl.ns, name);
    await sandbox().rest.delete(appRef(ctl.ns, name), { propagationPolicy: 'Background' });
    const gone = async (): Promise<boolean> => (await podsOf(ctl.ns, name)).length === 0 && (await revisionsOf(ctl.ns, name)).length === 0;
    const deadline = Date.now() + 60_000;
    while (!(await gone())) {
      if (Date.now() > deadline) throw new Error('pods or revisions left behind');
      await new Promise((r) => setTimeout(r, 200));
    }
    await expect(getApp(ctl.ns, name)).rejects.toMatchObject({ code: 'NotFound' });
  });
});

describe('invalid specs', () => {
  it('a template the apiserver rejects → InvalidSpec and an Event, no retry storm, recovery on a fix', async () => {
    const name = uniqueName('bad');
    const bad = {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: 'registry.example.com/web:v1', ports: [{ containerPort: 0 }] }] },
    };
    await createApp(ctl.ns, name, { replicas: 2, template: bad });
    const s = await until(ctl.ns, name, (x) => x.app.status?.conditions?.some((c) => c.type === ConditionType.invalidSpec && c.status === 'True') === true);
    expect(s.pods).toEqual([]);
    expect(s.app.status?.conditions).toContainEqual(
      expect.objectContaining({ type: ConditionType.failedCreatePod, status: 'True', reason: 'CreatePodFailed' }),
    );
    const rv = s.app.metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 2000));
    expect((await getApp(ctl.ns, name)).metadata.resourceVersion).toBe(rv);
    const events = await sandbox().rest.list<{ reason: string; type: string }>(core('events', ctl.ns), { fieldSelector: `involvedObject.name=${name}` });
    expect(events.items.filter((e) => e.reason === 'FailedCreate' && e.type === 'Warning')).toHaveLength(1);
    await patchApp(ctl.ns, name, {
      template: { spec: { containers: [{ name: 'main', image: 'registry.example.com/web:v1', ports: [{ containerPort: 8080 }] }] } },
    });
    const fixed = await settled(ctl.ns, name);
    expect(fixed.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.invalidSpec, status: 'False', reason: 'SpecValid' }));
    expect(fixed.app.status?.conditions).toContainEqual(expect.objectContaining({ type: ConditionType.failedCreatePod, status: 'False' }));
  });
});
