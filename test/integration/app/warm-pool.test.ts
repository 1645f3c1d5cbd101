/**
 * Pre-warming beyond in-place rollouts, on the sandbox with the real watcher and worker:
 * - a `ReCreate` rollout paused at a canary step has the new image in the ImageLists of the remaining pods'
 *   nodes (the replacement pods then find it where kube-scheduler's ImageLocality favours them);
 * - a warm pool (`imagePrewarm.nodeSelector`): a node that joins the running cluster with the pool's label gets
 *   the App's images in its ImageList as soon as its Node appears, and its daemon pulls them; a new template
 *   switches the pool to the new images; turning the pool off clears its entries.
 * The joining node is a simulated node started by this file, with its own daemon; its label is unique to this
 * file, so no other test's node is in the pool.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { startNodeDaemons, type NodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { rejection, sandbox } from '../support.ts';
import { deleteList, readList, waitImageStatus } from '../imagelist/helpers.ts';
import { DEDICATED_TAINT_KEY, startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { prewarmHeldBy, spreadTemplate } from './prewarm-support.ts';
import { createApp, image, patchApp, settled, uniqueName, until, useController, type Snapshot } from './harness.ts';

const ctl = useController('app-warm');
const POOL_KEY = 'sandbox.ebb.dev/warm-pool';
const POOL = `wp-${randomBytes(3).toString('hex')}`;
const TIMEOUT = 60_000;

const eventually = <T>(what: string, fn: () => Promise<T | undefined>): Promise<T> => waitFor(fn, { timeoutMs: TIMEOUT, intervalMs: 250, what });
const nodeOf = (p: Snapshot['pods'][number]): string => (typeof p.spec?.['nodeName'] === 'string' ? p.spec['nodeName'] : '');

describe('pre-warm for ReCreate rollouts', () => {
  it('a ReCreate rollout paused at a canary step: the remaining pods’ nodes hold the new image', async () => {
    const name = uniqueName('rc');
    await createApp(ctl.ns, name, {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      template: spreadTemplate(name, 'r1'),
      imagePrewarm: { enabled: true },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate', canary: { steps: [{ replicas: 1 }, { pause: {} }] } } },
    });
    const before = await settled(ctl.ns, name, undefined, TIMEOUT);
    await patchApp(ctl.ns, name, { template: spreadTemplate(name, 'r2') });
    const paused = await until(
      ctl.ns,
      name,
      (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.pausedAt !== undefined && s.app.status.readyReplicas === 3,
      { timeoutMs: TIMEOUT },
    );
    // The canary pod was recreated (a new UID), not updated in place.
    const canary = paused.pods.find((p) => p.metadata.labels?.['apps.ebb.dev/revision'] === paused.app.status?.updateRevision);
    expect(before.pods.map((p) => p.metadata.uid)).not.toContain(canary?.metadata.uid);
    const remaining = paused.pods.filter((p) => p !== canary);
    expect(remaining).toHaveLength(2);
    const want = remaining.map(nodeOf).sort();
    await eventually(`entries of ${image('r2')} on ${want.join(', ')}`, async () => {
      const held = await prewarmHeldBy(ctl.ns, name);
      return want.every((n) => held[n]?.includes(image('r2'))) ? true : undefined;
    });
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    await settled(ctl.ns, name, undefined, 90_000);
    await eventually('entries cleared once the rollout is over', async () => (Object.keys(await prewarmHeldBy(ctl.ns, name)).length === 0 ? true : undefined));
  });
});

describe('a warm pool', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['without pre-warm enabled', { enabled: false, nodeSelector: { [POOL_KEY]: POOL } }, 'a warm pool (nodeSelector) needs enabled: true'],
    ['with a label key the apiserver would refuse', { enabled: true, nodeSelector: { 'bad key': 'x' } }, 'label keys must be'],
    ['with a label value the apiserver would refuse', { enabled: true, nodeSelector: { [POOL_KEY]: 'not a value' } }, 'should match'],
  ])('is refused %s', async (_what, imagePrewarm, message) => {
    const err = await rejection(createApp(ctl.ns, uniqueName('wpv'), { imagePrewarm: imagePrewarm as AppSpec['imagePrewarm'] }));
    expect(err.code).toBe('Invalid');
    expect(err.message).toContain(message);
  });

  let node: DedicatedNode | undefined;
  let daemons: NodeDaemons | undefined;

  afterAll(async () => {
    await daemons?.stop();
    if (node) await deleteList(node.name);
    await node?.stop();
  });

  it('a node that joins with the pool’s label gets the App’s images, and loses them when the pool is turned off', async () => {
    const name = uniqueName('wp');
    // The joining node is tainted (dedicated to this file): a pool node whose taint the template does not
    // tolerate gets no entries, so the template tolerates it.
    const tolerating = (tag: string): ReturnType<typeof spreadTemplate> => {
      const t = spreadTemplate(name, tag);
      return {
        ...t,
        spec: { ...t.spec, containers: t.spec?.containers ?? [], tolerations: [{ key: DEDICATED_TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }] },
      };
    };
    await createApp(ctl.ns, name, {
      replicas: 1,
      podManagementPolicy: 'Parallel',
      template: tolerating('p1'),
      imagePrewarm: { enabled: true, nodeSelector: { [POOL_KEY]: POOL } },
    });
    await settled(ctl.ns, name, undefined, TIMEOUT);
    // No node is in the pool yet: nothing is requested.
    const empty = await until(ctl.ns, name, (s) => s.app.status?.prewarm !== undefined, { timeoutMs: TIMEOUT });
    expect(empty.app.status?.prewarm?.nodesRequested).toBe(0);
    expect(await prewarmHeldBy(ctl.ns, name)).toEqual({});

    // A node joins the running cluster with the pool's label, and its daemon starts.
    node = await startDedicatedNode({ prefix: 'it-warm', index: 61, timings: { pullMs: 200 }, labels: { [POOL_KEY]: POOL } });
    daemons = await startNodeDaemons({
      kubeconfig: sandbox().kubeconfig,
      nodes: [node.node],
      log: createLogger('daemon', 'warn'),
      options: { statusFlushMs: 200 },
    });
    const joined = node.name;
    await eventually(`the pool's entries on ${joined}`, async () => ((await prewarmHeldBy(ctl.ns, name))[joined]?.includes(image('p1')) ? true : undefined));
    await waitImageStatus(joined, image('p1'), (s) => s.phase === 'Pulled', 'Pulled', TIMEOUT);
    expect(node.node.store.status(image('p1'))).toBeDefined();
    const pulled = await until(ctl.ns, name, (s) => s.app.status?.prewarm?.nodesPulled === 1, { timeoutMs: TIMEOUT });
    expect(pulled.app.status?.prewarm).toMatchObject({ nodesRequested: 1, nodesPulled: 1, nodesFailed: 0 });
    expect(Object.keys(await prewarmHeldBy(ctl.ns, name))).toEqual([joined]);

    // A new template: the pool holds the new images instead.
    await patchApp(ctl.ns, name, { template: tolerating('p2') });
    await eventually(`the new image on ${joined}`, async () => {
      const held = (await prewarmHeldBy(ctl.ns, name))[joined];
      return held?.includes(image('p2')) && !held.includes(image('p1')) ? true : undefined;
    });
    await waitImageStatus(joined, image('p2'), (s) => s.phase === 'Pulled', 'Pulled', TIMEOUT);
    await settled(ctl.ns, name, undefined, 90_000);
    expect((await prewarmHeldBy(ctl.ns, name))[joined]).toEqual([image('p2')]);

    // The pool turned off: its entries go, and the App's status no longer reports pre-warming.
    await patchApp(ctl.ns, name, { imagePrewarm: { nodeSelector: null } });
    await eventually('the pool’s entries cleared', async () => (Object.keys(await prewarmHeldBy(ctl.ns, name)).length === 0 ? true : undefined));
    expect((await readList(joined))?.spec?.images ?? []).toEqual([]);
    await until(ctl.ns, name, (s) => s.app.status?.prewarm === undefined, { timeoutMs: TIMEOUT });
  });
});
