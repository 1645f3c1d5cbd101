/**
 * The rollouts page's pre-warm section in headless Chromium, on a real sandbox: three simulated nodes of this
 * file's own, each with its node daemon, and an App with pre-warming spread one pod per node. The App is paused
 * with a new image, so the worker asks every node for it: one node pulls it at once, one pulls slowly, and on the
 * third the registry refuses it. The App's page shows each node's state and why, as `ebb rollout explain` does.
 * The screenshot goes to test-results/rollouts-page/; with EBB_DOC_SHOTS=1 to docs/img/rollouts-prewarm.png too.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ImagePhase } from '../../../src/api/image-list.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { startNodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { createApp, patchApp, settled } from '../app/harness.ts';
import { DEDICATED_TAINT_KEY, startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { deleteList, readList } from '../imagelist/helpers.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { APP_READ_RULE, boardViewer } from './board-viewers.ts';
import { browserPage, shot, shows } from './chromium.ts';
import { deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const tag = randomBytes(3).toString('hex');
const image = (v: string): string => `registry.example.com/page/web:${v}-${tag}`;
const POOL_LABEL = 'sandbox.ebb.dev/pool';
/** Long enough that the slow node is still pulling when the page is read; its daemon is stopped after. */
const SLOW_PULL_MS = 300_000;

describe('the rollouts page: pre-warm across nodes', () => {
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('shows each node pulled, pulling or failed, with why, and the pods that wait there', async () => {
    printLogsOnFailure(procs);
    const { rest, kubeconfig, redisUrl } = sandbox();
    const ns = await freshNamespace('page-pw');
    cleanups.push(() => deleteNamespace(rest, ns));
    const pool = `pw-${tag}`;

    const nodes: DedicatedNode[] = [];
    for (const [i, prefix] of ['it-pw-fast', 'it-pw-slow', 'it-pw-refused'].entries()) {
      const node = await startDedicatedNode({ prefix, index: 66 + i, timings: { pullMs: 100 }, labels: { [POOL_LABEL]: pool } });
      nodes.push(node);
      cleanups.push(async () => {
        await deleteList(node.name);
        await node.stop();
      });
    }
    const [fast, slow, refused] = nodes as [DedicatedNode, DedicatedNode, DedicatedNode];
    const daemons = await startNodeDaemons({
      kubeconfig,
      nodes: nodes.map((n) => n.node),
      log: createLogger('daemon', 'warn'),
      // A refused pull is retried after 10 minutes, not 5 s: the refused node stays Failed while the page is read.
      options: { statusFlushMs: 200, backoffBaseMs: 600_000, backoffMaxMs: 600_000 },
    });
    // Stopped before the nodes (cleanups run in reverse): the slow pull is cancelled with its daemon.
    cleanups.push(() => daemons.stop());

    const operator = await boardViewer(rest, { namespace: ns, name: 'operator', rules: [APP_READ_RULE], clusterWide: true }, cleanups);
    const env = ebbEnv(
      { kubeconfig, redisUrl, prefix: uniquePrefix('page-pw'), namespaces: [ns] },
      { EBB_BOARD: 'true', EBB_HTTP_ADDRESS: '0.0.0.0', EBB_SCALER: 'false', EBB_BOARD_KUBE_AUTH_RESOURCE: 'apps.apps.ebb.dev' },
    );
    const watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    procs.push(spawnEbb('worker', { ...env, EBB_BOARD: 'false' }));
    const origin = `http://127.0.0.1:${await watcher.httpPort(120_000)}`;

    // One pod per pool node: the pool's label selects the nodes, their taints are tolerated, the spread does the rest.
    const name = 'web';
    const template = (v: string): AppSpec['template'] => ({
      metadata: { labels: { app: name } },
      spec: {
        containers: [{ name: 'main', image: image(v) }],
        terminationGracePeriodSeconds: 1,
        nodeSelector: { [POOL_LABEL]: pool },
        tolerations: [{ key: DEDICATED_TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }],
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } },
        ],
      },
    });
    await createApp(ns, name, {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      template: template('v1'),
      imagePrewarm: { enabled: true },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', paused: true } },
    });
    await settled(ns, name, undefined, 90_000);

    slow.setTimings({ pullMs: SLOW_PULL_MS });
    refused.registry.failPulls(image('v2'), 'simulated registry error: manifest unknown');
    await patchApp(ns, name, { template: template('v2') });
    // The rollout is paused, so every pod left to update is a target: the worker asks all three nodes for v2.
    const phaseOn = async (node: DedicatedNode): Promise<string | undefined> =>
      ((await readList(node.name))?.status?.images ?? []).find((s) => s.image === image('v2'))?.phase;
    await waitFor(
      async () => (await phaseOn(fast)) === ImagePhase.pulled && (await phaseOn(slow)) === ImagePhase.pulling && (await phaseOn(refused)) === ImagePhase.failed,
      { timeoutMs: 90_000, intervalMs: 250, what: 'v2 pulled on the fast node, pulling on the slow one, failed on the refused one' },
    );

    const page = await browserPage(cleanups);
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${operator}` });
    expect((await page.goto(`${origin}/rollouts/${ns}/${name}`))?.status()).toBe(200);
    await shows(page, 'Pre-warm', 'the pre-warm section');
    const section = page.locator('section[aria-labelledby="h-prewarm"]');
    await shows(page, /1 of 3 nodes pulled, 1 failed/, 'the pre-warm summary');
    const row = (node: DedicatedNode) => section.locator('tbody tr').filter({ hasText: node.name });
    expect(await row(fast).innerText()).toMatch(/Pulled\s+1\/1/);
    expect(await row(slow).innerText()).toMatch(/Pulling\s+0\/1/);
    const refusedRow = await row(refused).innerText();
    expect(refusedRow).toMatch(/Failed\s+0\/1/);
    // Why: the daemon's report of the refused pull (cut to the status's bound), naming the image.
    expect(refusedRow).toContain(`${image('v2')}: Runtime: CRI PullImage: failed to pull`);
    // Each node names the pod that waits for its pull.
    for (const node of nodes) expect(await row(node).innerText()).toMatch(new RegExp(`${name}-[0-2]`));
    await shot(page, 'app-prewarm', 'rollouts-prewarm.png');
  });
});
