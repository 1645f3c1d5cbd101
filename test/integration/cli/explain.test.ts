/**
 * `ebb rollout explain` as a user runs it, a child process against the sandbox with the real watcher and worker
 * (and their queue in Redis): a rollout held at a timed canary pause (in a terminal, piped, as JSON through the
 * kubectl plugin), a rollout waiting on a lifecycle hook, the queues out of reach, and `--context`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ConditionType, LIFECYCLE_STATE_LABEL } from '../../../src/api/keys.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { waitFor } from '../../../src/common/wait.ts';
import type { Explanation } from '../../../src/cli/rollout/explain/model.ts';
import { createApp, image, patchApp, settled, uniqueName, until, useController } from '../app/harness.ts';
import { sandbox } from '../support.ts';
import { cliEnv, KUBECTL, MAIN, pluginDir, run, Tmux } from './cli.ts';

const ctl = useController('cli-explain');
/** The user's environment with the controller's queue settings, so explain finds the App's jobs and timers. */
const queueEnv = (extraPath?: string): NodeJS.ProcessEnv => ({
  ...cliEnv(extraPath),
  EBB_REDIS_URL: ctl.env['EBB_REDIS_URL'],
  EBB_QUEUE_PREFIX: ctl.env['EBB_QUEUE_PREFIX'],
});
/**
 * Redis answers in milliseconds, but on a loaded machine the CLI process itself may take seconds to get there:
 * the tests that read the queues give it longer than the 3 s a user waits by default.
 */
const QUEUE_TIMEOUT = '--queue-timeout=60s';
const explain = (name: string, extra: string[] = [], env = queueEnv()) =>
  run(process.execPath, [MAIN, 'rollout', 'explain', `app/${name}`, '-n', ctl.ns, QUEUE_TIMEOUT, ...extra], env);

const TRAFFIC = 'traffic.example.com/serving';
const withTraffic = (name: string, tag: string): AppSpec['template'] => ({
  metadata: { labels: { app: name, [TRAFFIC]: 'yes' } },
  spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
});

/** Runs explain in a tmux pane `cols` wide (a terminal) and returns what the pane shows once it exited. */
async function inTerminal(tmux: Tmux, name: string, cols: number): Promise<string> {
  const command = `'${process.execPath}' '${MAIN}' rollout explain app/${name} -n ${ctl.ns}; echo "EXIT=$?"; sleep 300`;
  const env = queueEnv();
  await tmux.start(
    name,
    command,
    { KUBECONFIG: sandbox().kubeconfig, EBB_REDIS_URL: env['EBB_REDIS_URL'] ?? '', EBB_QUEUE_PREFIX: env['EBB_QUEUE_PREFIX'] ?? '' },
    cols,
    60,
  );
  return waitFor(
    async () => {
      const pane = await tmux.capture(name);
      return pane.includes('EXIT=') ? pane : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: 'explain to exit in tmux' },
  );
}

describe('ebb rollout explain', () => {
  const tmux = new Tmux();
  afterAll(() => tmux.stop());

  it('a rollout held at a timed canary pause: the pause and its end, the pods it holds, the timer, the last reconcile', async () => {
    const name = uniqueName('cn');
    await createApp(ctl.ns, name, {
      replicas: 3,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps: [{ replicas: 1 }, { pause: { duration: '10m' } }] } } },
    });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: withTraffic(name, 'v2') });
    const paused = await until(ctl.ns, name, (s) => s.app.status?.conditions?.some((c) => c.type === ConditionType.paused && c.status === 'True') === true, {
      what: 'the canary pause step',
    });
    const update = paused.app.status?.updateRevision ?? '';

    const piped = await explain(name);
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toContain('\x1b');
    const text = piped.stdout;
    process.stdout.write(`--- explain, piped:\n${text}`);
    expect(text).toMatch(/WAITING FOR\n {2}paused: canary step 2: paused until (\S+) \(until \1, in (9m\d\ds|10m00s)\)\n/);
    expect(text).toContain(`  ${name}-2  update `);
    expect(text).toMatch(new RegExp(`  ${name}-1  current .* the rollout is paused \\(CanaryTimedPause\\)`));
    // The timer the reconcile set, read from the timers queue.
    expect(text).toMatch(/NEXT\n {2}in (9m\d\ds|10m00s) \(\S+\) timer canary-pause: the canary pause step ends\n/);
    // The last reconcile's summary and log lines, read from the reconcile queue.
    expect(text).toMatch(new RegExp(`LAST RECONCILE\\n {2}(now|\\S+ ago) \\(job App\\.${ctl.ns}\\.${name}\\.[0-9a-f]{12}\\): `));
    expect(text).not.toContain('NOTES');

    const pane = await inTerminal(tmux, name, 100);
    process.stdout.write(`--- explain, in a terminal 100 columns wide:\n${pane.trimEnd()}\n`);
    expect(pane).toContain('EXIT=0');
    expect(pane).toContain('WAITING FOR');
    const lines = pane.split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
    // A line wider than the terminal is cut, not wrapped.
    expect(lines.some((l) => l.endsWith('…'))).toBe(true);

    const json = await run(KUBECTL, ['ebb', 'rollout', 'explain', `app/${name}`, '-n', ctl.ns, '-o', 'json', QUEUE_TIMEOUT], queueEnv(await pluginDir()));
    expect(json.code).toBe(0);
    const e = JSON.parse(json.stdout) as Explanation;
    expect(e.state).toBe('progressing');
    expect(e.revisions.update).toBe(update);
    expect(e.waits.map((w) => w.kind)).toEqual(['paused']);
    expect(Date.parse(e.waits[0]?.until ?? '') - Date.now()).toBeGreaterThan(8 * 60_000);
    expect(e.next.find((n) => n.source === 'timer')?.what).toBe('timer canary-pause: the canary pause step ends');
    expect(e.lastReconcile?.jobId).toMatch(new RegExp(`^App\\.${ctl.ns}\\.${name}\\.`));
    expect(e.pods.map((p) => p.revision)).toEqual(['update', 'current', 'current']);
  });

  it('a rollout waiting on a lifecycle hook: the pod, its hook and the handler to remove', async () => {
    const name = uniqueName('hk');
    await createApp(ctl.ns, name, { replicas: 2, template: withTraffic(name, 'v1'), lifecycle: { preDelete: { labelsHandler: { [TRAFFIC]: 'yes' } } } });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: withTraffic(name, 'v2') });
    await until(ctl.ns, name, (s) => s.pods.some((p) => p.metadata.labels?.[LIFECYCLE_STATE_LABEL] === 'PreparingDelete'), {
      what: 'a pod in PreparingDelete',
    });
    const res = await waitFor(
      async () => {
        const r = await explain(name);
        return r.stdout.includes('  hook: ') ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the hook condition in explain' },
    );
    expect(res.code).toBe(0);
    process.stdout.write(`--- explain, a hook wait:\n${res.stdout}`);
    expect(res.stdout).toMatch(/WAITING FOR\n(.*\n)* {2}hook: 1 pod waits for lifecycle hook handlers to be removed: /);
    expect(res.stdout).toContain(`lifecycle hook preDelete since `);
    expect(res.stdout).toContain(`waits until its handlers are removed (label ${TRAFFIC}=yes)`);
    const e = JSON.parse((await explain(name, ['--output=json'])).stdout) as Explanation;
    const waiting = e.pods.find((p) => p.waits.some((w) => w.kind === 'hook'));
    expect(waiting?.name).toBe(`${name}-1`);
  });

  it('without the queues it still explains, and says why the last reconcile is missing', async () => {
    const name = uniqueName('nq');
    await createApp(ctl.ns, name, { replicas: 1 });
    await settled(ctl.ns, name);
    const res = await explain(name, [], { ...cliEnv(), EBB_REDIS_URL: 'redis://127.0.0.1:1' });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('WAITING FOR\n  nothing: the rollout is complete\n');
    expect(res.stdout).toMatch(
      /NOTES\n {2}the queues were not read \(Redis at redis:\/\/127\.0\.0\.1:1 \(EBB_REDIS_URL\): .+\): no last reconcile or timers shown/,
    );
    expect(res.stdout).not.toContain('LAST RECONCILE');
    const missing = await explain('nope', [], { ...cliEnv(), EBB_REDIS_URL: 'redis://127.0.0.1:1' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^ebb rollout: .*"nope" not found/);
  });

  it('--context picks a context of the kubeconfig, and its namespace is the default', async () => {
    const name = uniqueName('cx');
    await createApp(ctl.ns, name, { replicas: 1 });
    await settled(ctl.ns, name);
    const { readFile } = await import('node:fs/promises');
    const doc = parse(await readFile(sandbox().kubeconfig, 'utf8')) as {
      contexts: { name: string; context: Record<string, string> }[];
      clusters: { name: string; cluster: Record<string, unknown> }[];
      'current-context': string;
    };
    const real = doc.contexts.find((c) => c.name === doc['current-context'])!;
    doc.clusters.push({ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } });
    doc.contexts.push({ name: 'nowhere', context: { ...real.context, cluster: 'nowhere' } }, { name: 'team', context: { ...real.context, namespace: ctl.ns } });
    doc['current-context'] = 'nowhere';
    const path = join(sandbox().dir, `kubeconfig-${name}`);
    await writeFile(path, stringify(doc));
    const env = { ...cliEnv(), KUBECONFIG: path, EBB_REDIS_URL: 'redis://127.0.0.1:1' };
    const status = await run(process.execPath, [MAIN, 'rollout', 'status', `app/${name}`, '--context', 'team', '--watch=false'], env);
    expect(status.stderr).toBe('');
    expect(status.stdout).toMatch(new RegExp(`^app "${name}" rolled out: 1 pod at revision`, 'm'));
    const e = JSON.parse((await run(process.execPath, [MAIN, 'rollout', 'explain', `app/${name}`, '--context=team', '-o', 'json'], env)).stdout) as Explanation;
    expect(e.app).toMatchObject({ namespace: ctl.ns, name });
    const missing = await run(process.execPath, [MAIN, 'rollout', 'history', `app/${name}`, '--context', 'staging'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('context "staging" is not defined');
  });
});
