/**
 * Pre-warm for pods that are about to be created, on the sandbox with the real watcher and worker and two
 * simulated nodes of this file (each with its daemon; the template's nodeSelector and tolerations select
 * exactly these two, one pod per node):
 * - a scale-up: an OrderedReady App scaled from 0 to 2 creates pod 0 and defers pod 1 until pod 0 is available;
 *   meanwhile the nodes pod 1 can land on pull the image, so pod 1 starts without a kubelet pull, and once
 *   every pod has a node the entries go;
 * - a `ReCreate` rollout: while it pauses at a canary step, the remaining pod's node pulls the new image; the
 *   pod recreated there after the pause starts without a kubelet pull, and `status.prewarm.podsOnWarmNodes`
 *   counts it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { startNodeDaemons, type NodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { sandbox } from '../support.ts';
import { deleteList, startEvents, waitImageStatus } from '../imagelist/helpers.ts';
import { DEDICATED_TAINT_KEY, startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { prewarmHeldBy } from './prewarm-support.ts';
import { createApp, image, patchApp, settled, uniqueName, until, useController } from './harness.ts';

const ctl = useController('app-scale-pw');
const GROUP_KEY = 'sandbox.ebb.dev/node-group';
const GROUP = `su-${randomBytes(3).toString('hex')}`;
/** A pull slow enough that a kubelet pull would show, short enough for the test. */
const PULL_MS = 1_500;
const TIMEOUT = 60_000;

/** Pods on this file's two nodes only, one per node. */
function placed(name: string, tag: string): AppSpec['template'] {
  return {
    metadata: { labels: { app: name } },
    spec: {
      containers: [{ name: 'main', image: image(tag) }],
      terminationGracePeriodSeconds: 0,
      nodeSelector: { [GROUP_KEY]: GROUP },
      tolerations: [{ key: DEDICATED_TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }],
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } },
      ],
    },
  };
}

describe('pre-warm for new and recreated pods', () => {
  const nodes: DedicatedNode[] = [];
  const apps: string[] = [];
  let daemons: NodeDaemons | undefined;

  beforeAll(async () => {
    for (const index of [62, 63])
      nodes.push(await startDedicatedNode({ prefix: 'it-scale', index, timings: { pullMs: PULL_MS }, labels: { [GROUP_KEY]: GROUP } }));
    daemons = await startNodeDaemons({
      kubeconfig: sandbox().kubeconfig,
      nodes: nodes.map((n) => n.node),
      log: createLogger('daemon', 'warn'),
      options: { statusFlushMs: 200 },
    });
  });

  afterAll(async () => {
    // The Apps' pods leave the nodes first (scaled to 0), so stopping a node does not race the Apps recreating them.
    for (const name of apps) await patchApp(ctl.ns, name, { replicas: 0 }).catch(() => undefined);
    for (const name of apps) await until(ctl.ns, name, (s) => s.pods.length === 0, { timeoutMs: TIMEOUT }).catch(() => undefined);
    await daemons?.stop();
    for (const n of nodes) await deleteList(n.name);
    await Promise.all(nodes.map((n) => n.stop()));
  });

  it('OrderedReady from 0 to 2: the deferred pod’s candidate nodes pull first, and it starts with no kubelet pull', async () => {
    const name = uniqueName('su');
    apps.push(name);
    const tag = `s-${randomBytes(2).toString('hex')}`;
    // minReadySeconds keeps pod 1 deferred well past the nodes' pre-warm pulls.
    await createApp(ctl.ns, name, {
      replicas: 2,
      podManagementPolicy: 'OrderedReady',
      minReadySeconds: 4,
      template: placed(name, tag),
      imagePrewarm: { enabled: true },
    });
    const names = nodes.map((n) => n.name).sort();
    // While pod 1 waits, both nodes it can land on are requested (no sandbox node: they lack the label).
    await waitFor(
      async () =>
        Object.keys(await prewarmHeldBy(ctl.ns, name))
          .sort()
          .join() === names.join()
          ? true
          : undefined,
      {
        timeoutMs: TIMEOUT,
        intervalMs: 100,
        what: `pre-warm entries on ${names.join(', ')}`,
      },
    );
    const done = await settled(ctl.ns, name, undefined, TIMEOUT);
    const pod1 = done.pods.find((p) => p.metadata.name === `${name}-1`);
    expect(pod1).toBeDefined();
    const events = await startEvents(ctl.ns, pod1!.metadata.uid ?? '');
    expect(events.filter((e) => e.reason === 'Pulled').map((e) => e.message)).toEqual([`Container image "${image(tag)}" already present on machine`]);
    expect(events.some((e) => e.reason === 'Pulling')).toBe(false);
    // Every pod has a node: the scale-up's entries go.
    await waitFor(async () => (Object.keys(await prewarmHeldBy(ctl.ns, name)).length === 0 ? true : undefined), {
      timeoutMs: TIMEOUT,
      intervalMs: 200,
      what: 'entries cleared',
    });
  });
  it('a ReCreate rollout: the pod recreated after a canary pause finds the image on its node, and is counted', async () => {
    const name = uniqueName('rc');
    apps.push(name);
    const [v1, v2] = [`a-${randomBytes(2).toString('hex')}`, `b-${randomBytes(2).toString('hex')}`];
    await createApp(ctl.ns, name, {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      minReadySeconds: 4,
      template: placed(name, v1),
      imagePrewarm: { enabled: true },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate', canary: { steps: [{ replicas: 1 }, { pause: {} }] } } },
    });
    const before = await settled(ctl.ns, name, undefined, TIMEOUT);
    const pod0 = before.pods.find((p) => p.metadata.name === `${name}-0`);
    const node0 = typeof pod0?.spec?.['nodeName'] === 'string' ? pod0.spec['nodeName'] : '';
    await patchApp(ctl.ns, name, { template: placed(name, v2) });
    // Paused after the canary: pod 0's node pulls the new image.
    await until(ctl.ns, name, (s) => s.app.status?.canary?.pausedAt !== undefined && s.app.spec.updateStrategy?.rollingUpdate?.paused === true, {
      timeoutMs: TIMEOUT,
    });
    await waitImageStatus(node0, image(v2), (st) => st.phase === 'Pulled', 'Pulled', TIMEOUT);
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    // Pod 0 is recreated on its node (one pod per node), after the pull: counted while pre-warming goes on.
    const counted = await until(ctl.ns, name, (s) => s.app.status?.prewarm?.podsOnWarmNodes === 1, { timeoutMs: TIMEOUT });
    const recreated = counted.pods.find((p) => p.metadata.name === `${name}-0`);
    expect(recreated?.metadata.uid).not.toBe(pod0?.metadata.uid);
    expect(recreated?.spec?.['nodeName']).toBe(node0);
    const events = await startEvents(ctl.ns, recreated?.metadata.uid ?? '');
    expect(events.filter((e) => e.reason === 'Pulled').map((e) => e.message)).toEqual([`Container image "${image(v2)}" already present on machine`]);
    expect(events.some((e) => e.reason === 'Pulling')).toBe(false);
    await settled(ctl.ns, name, undefined, TIMEOUT);
    await waitFor(async () => (Object.keys(await prewarmHeldBy(ctl.ns, name)).length === 0 ? true : undefined), {
      timeoutMs: TIMEOUT,
      intervalMs: 200,
      what: 'entries cleared',
    });
  });
});
