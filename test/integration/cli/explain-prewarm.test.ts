/**
 * `ebb rollout explain` for a rollout whose next pod waits on a pre-warm pull: a simulated node of this file's
 * own with slow pulls and its node daemon (in this process), an App on it with pre-warming, paused with a new
 * image, so the worker asks the node for the image and the daemon is still pulling it when explain runs.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ImagePhase } from '../../../src/api/image-list.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import type { Explanation } from '../../../src/cli/rollout/explain/model.ts';
import { startNodeDaemons, type NodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { createApp, patchApp, settled, uniqueName, useController } from '../app/harness.ts';
import { startDedicatedNode, type DedicatedNode } from '../imagelist/dedicated-node.ts';
import { deleteList, readList } from '../imagelist/helpers.ts';
import { sandbox } from '../support.ts';
import { cliEnv, MAIN, run, Tmux } from './cli.ts';

const ctl = useController('cli-xpw');
const tag = randomBytes(3).toString('hex');
const image = (v: string): string => `registry.example.com/explain/web:${v}-${tag}`;
/** Long enough that the pull is still under way when explain runs; the daemon is stopped (pulls cancelled) after. */
const SLOW_PULL_MS = 120_000;

describe('ebb rollout explain: a pre-warm pull under way', () => {
  let node: DedicatedNode;
  let daemons: NodeDaemons;
  const tmux = new Tmux();

  beforeAll(async () => {
    node = await startDedicatedNode({ prefix: 'it-explain', index: 57, timings: { pullMs: 100 } });
    daemons = await startNodeDaemons({
      kubeconfig: sandbox().kubeconfig,
      nodes: [node.node],
      log: createLogger('daemon', 'warn'),
      options: { statusFlushMs: 200 },
    });
  });

  afterAll(async () => {
    await tmux.stop();
    await daemons?.stop();
    await deleteList(node?.name ?? '');
    await node?.stop();
  });

  const template = (name: string, v: string): AppSpec['template'] => ({
    metadata: { labels: { app: name } },
    spec: { ...node.placement, containers: [{ name: 'main', image: image(v) }], terminationGracePeriodSeconds: 1 },
  });

  it('shows the node, its pull in progress, and the pod that waits for it', async () => {
    const name = uniqueName('pw');
    await createApp(ctl.ns, name, {
      replicas: 1,
      template: template(name, 'v1'),
      imagePrewarm: { enabled: true },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', paused: true } },
    });
    await settled(ctl.ns, name);
    node.setTimings({ pullMs: SLOW_PULL_MS });
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    // The worker asks the node for v2 (the rollout waits, so every pod left to update is a target); its daemon starts pulling.
    await waitFor(async () => ((await readList(node.name))?.status?.images ?? []).find((s) => s.image === image('v2') && s.phase === ImagePhase.pulling), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the daemon pulling v2',
    });
    const env = { ...cliEnv(), EBB_REDIS_URL: ctl.env['EBB_REDIS_URL'], EBB_QUEUE_PREFIX: ctl.env['EBB_QUEUE_PREFIX'] };
    const res = await waitFor(
      async () => {
        const r = await run(process.execPath, [MAIN, 'rollout', 'explain', `app/${name}`, '-n', ctl.ns], env);
        return r.stdout.includes(`${node.name}  Pulling`) ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'explain to show the pull' },
    );
    process.stdout.write(`--- explain, a pre-warm pull under way:\n${res.stdout}`);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('PRE-WARM\n  0/1 requested nodes pulled · images ' + image('v2'));
    expect(res.stdout).toContain(`${image('v2')} Pulling (attempt 1)`);
    expect(res.stdout).toMatch(
      new RegExp(`  ${name}-0 +current +${node.name} +yes +pre-warm on ${node.name}: Pulling, 0/1 images pulled; the rollout is paused \\(PausedBySpec\\)`),
    );

    const e = JSON.parse((await run(process.execPath, [MAIN, 'rollout', 'explain', `app/${name}`, '-n', ctl.ns, '-o', 'json'], env)).stdout) as Explanation;
    expect(e.prewarm?.nodes).toEqual([
      { node: node.name, state: 'Pulling', pulled: 0, images: [expect.objectContaining({ image: image('v2'), phase: 'Pulling' })], pods: [`${name}-0`] },
    ]);
    expect(e.pods[0]?.waits.map((w) => w.kind)).toEqual(['prewarm', 'turn']);

    const command = `'${process.execPath}' '${MAIN}' rollout explain app/${name} -n ${ctl.ns}; echo "EXIT=$?"; sleep 300`;
    await tmux.start(
      name,
      command,
      { KUBECONFIG: sandbox().kubeconfig, EBB_REDIS_URL: env.EBB_REDIS_URL ?? '', EBB_QUEUE_PREFIX: env.EBB_QUEUE_PREFIX ?? '' },
      120,
      60,
    );
    const pane = await waitFor(async () => ((await tmux.capture(name)).includes('EXIT=') ? tmux.capture(name) : undefined), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'explain to exit in tmux',
    });
    process.stdout.write(`--- the same in a terminal 120 columns wide:\n${pane.trimEnd()}\n`);
    expect(pane).toContain('EXIT=0');
    expect(pane).toMatch(new RegExp(`${node.name} +Pulling +0/1`));
    for (const l of pane.split('\n')) expect(l.length).toBeLessThanOrEqual(120);
  });
});
