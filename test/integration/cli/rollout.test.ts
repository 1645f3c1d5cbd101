/**
 * `ebb rollout` as a user runs it, a child process against the sandbox with the real watcher and worker:
 * `status` in a terminal (tmux) and piped, its exit codes, pause/resume, history, undo, restart, and the
 * kubectl plugin. Every assertion reads the App, its pods and revisions back from the apiserver.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { API_VERSION, APP_KIND, appRef } from '../../../src/api/group.ts';
import type { App } from '../../../src/api/app.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { createApp, getApp, image, patchApp, podsOf, revisionsOf, settled, template, uniqueName, until, useController } from '../app/harness.ts';
import { freshNamespace, LONG_SCENARIO_MS, sandbox } from '../support.ts';
import { cliEnv, ebb, KUBECTL, MAIN, pluginDir, run, Tmux } from './cli.ts';

const ctl = useController('cli-roll');
const imageOf = (app: App): string | undefined => app.spec.template.spec?.containers[0]?.image;

describe('ebb rollout status', () => {
  const tmux = new Tmux();
  afterAll(() => tmux.stop());

  it('in a terminal redraws one progress line until the rollout completes, then exits 0', async () => {
    const name = uniqueName('tty');
    await createApp(ctl.ns, name, { replicas: 3 });
    await settled(ctl.ns, name);
    // Paused with a new template, so the command surely starts before the rollout and sees it move.
    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { rollingUpdate: { paused: true } } });
    const { kubeconfig } = sandbox();
    const command = `'${process.execPath}' '${MAIN}' rollout status app/${name} -n ${ctl.ns}; echo "EXIT=$?"; sleep 300`;
    await tmux.start(name, command, { KUBECONFIG: kubeconfig });
    const panes: string[] = [];
    const capture = async (until: (pane: string) => boolean, what: string): Promise<string> =>
      waitFor(
        async () => {
          const pane = await tmux.capture(name);
          panes.push(pane);
          return until(pane) ? pane : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 150, what },
      );
    const first = await capture((p) => p.includes(' · paused'), 'the paused rollout in the tmux pane');
    expect(first).toContain(`${name}: rolling update · updated 0/3 · ready 3/3 · available 3/3 · paused`);
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    const final = await capture((p) => p.includes('EXIT='), 'the rollout status to exit in tmux');
    const statusLines = (pane: string): string[] => pane.split('\n').filter((l) => l.startsWith(`${name}: `));
    // While it ran, the pane showed the rollout move, never more than one status line (redrawn in place).
    const during = panes.filter((p) => !p.includes('EXIT='));
    expect(during.some((p) => /updated [1-3]\/3/.test(p) && !p.includes(' · paused'))).toBe(true);
    for (const p of during) expect(statusLines(p).length).toBeLessThanOrEqual(1);
    expect(statusLines(final)).toHaveLength(1);
    expect(final).toMatch(new RegExp(`app "${name}" rolled out: 3 pods at revision ${name}-\\w+`));
    expect(final).toContain('EXIT=0');
    expect((await getApp(ctl.ns, name)).status).toMatchObject({ updatedReplicas: 3, availableReplicas: 3 });
  });

  it('piped prints one plain line per change, then the outcome, and exits 0', async () => {
    const name = uniqueName('pipe');
    await createApp(ctl.ns, name, { replicas: 3 });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { rollingUpdate: { paused: true } } });
    let resumed: Promise<unknown> | undefined;
    const res = await ebb(['rollout', 'status', `app/${name}`, '-n', ctl.ns], (out) => {
      if (out.includes('paused')) resumed ??= patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    });
    await resumed;
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).not.toContain('\r');
    expect(res.stdout).not.toContain('\x1b');
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(new RegExp(`^app "${name}" rolled out: 3 pods at revision ${name}-\\w+$`));
    const progress = lines.slice(0, -1);
    expect(progress).toContain(`${name}: rolling update · updated 0/3 · ready 3/3 · available 3/3 · paused`);
    expect(progress.length).toBeGreaterThanOrEqual(3);
    for (const l of progress)
      expect(l).toMatch(
        // Never "scaling": a pod recreated by the rollout is the rollout's step.
        new RegExp(`^${name}: (rolling update|waiting for generation \\d to be observed) · updated \\d/3 · ready \\d/3 · available \\d/3`),
      );
    // A line is printed only when it changed.
    for (let i = 1; i < progress.length; i++) expect(progress[i]).not.toBe(progress[i - 1]);
  });

  it('an in-place rollout, piped: every line says rolling update, never scaling, down to the last pod', async () => {
    const name = uniqueName('inpl');
    const inPlace = { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } as const;
    await createApp(ctl.ns, name, { replicas: 3, minReadySeconds: 1, updateStrategy: inPlace });
    await settled(ctl.ns, name);
    // Paused with the new template, so the command surely starts before the rollout; resumed once it printed.
    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { rollingUpdate: { paused: true } } });
    let resumed: Promise<unknown> | undefined;
    const res = await ebb(['rollout', 'status', `app/${name}`, '-n', ctl.ns], (out) => {
      if (out.includes('paused')) resumed ??= patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    });
    await resumed;
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(new RegExp(`^app "${name}" rolled out: 3 pods at revision `));
    expect(lines.slice(0, -1).some((l) => l.includes(' · in place: '))).toBe(true);
    for (const l of lines.slice(0, -1)) expect(l).toMatch(new RegExp(`^${name}: (rolling update|waiting for generation \\d to be observed) · `));
  });

  it('exits 3 past the progress deadline and 1 on an invalid spec, and shows pods waiting on a hook', async () => {
    // A namespace no controller watches: the status is written here as ebb would write it.
    const ns = await freshNamespace('cli-nocontroller');
    const name = uniqueName('st');
    const { rest } = sandbox();
    await rest.create(appRef(ns), {
      apiVersion: API_VERSION,
      kind: APP_KIND,
      metadata: { name, namespace: ns },
      spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: template(name, 'v1') },
    });
    const writeStatus = (conditions: object[]): Promise<unknown> =>
      rest.patch(
        appRef(ns, name, 'status'),
        { status: { observedGeneration: 1, replicas: 2, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1, conditions } },
        PatchType.merge,
      );
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const c = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastTransitionTime: at });
    await writeStatus([
      c('Progressing', 'True', 'RollingUpdate', 'rolling update'),
      c('LifecycleHookWaiting', 'True', 'PreNormalHook', `${name}-1 waits on the preNormal hook for 12s`),
    ]);
    const hook = await ebb(['rollout', 'status', `app/${name}`, '-n', ns, '--watch=false']);
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe(`${name}: rolling update · updated 1/2 · ready 1/2 · available 1/2 · hook: ${name}-1 waits on the preNormal hook for 12s\n`);

    await writeStatus([c('Progressing', 'False', 'ProgressDeadlineExceeded', 'no progress within 60s')]);
    const deadline = await ebb(['rollout', 'status', `app/${name}`, '-n', ns]);
    expect(deadline.stdout).toContain(`app "${name}" exceeded its progress deadline: no progress within 60s`);
    expect(deadline.code).toBe(3);

    await writeStatus([c('Progressing', 'True', 'RollingUpdate', 'x'), c('InvalidSpec', 'True', 'SpecInvalid', 'claims refused')]);
    const invalid = await ebb(['rollout', 'status', `app/${name}`, '-n', ns]);
    expect(invalid.stdout).toContain(`app "${name}" rollout failed: invalid spec: claims refused`);
    expect(invalid.code).toBe(1);

    await writeStatus([c('Progressing', 'True', 'RollingUpdate', 'x'), c('InvalidSpec', 'False', 'SpecValid', 'ok')]);
    const timeout = await ebb(['rollout', 'status', `app/${name}`, '-n', ns, '--timeout', '2s']);
    expect(timeout.stdout).toContain(`timed out after 2s waiting for app "${name}" to roll out`);
    expect(timeout.code).toBe(4);
  });

  it("fails with the apiserver's words for an App that does not exist, and exits 2 on bad arguments", async () => {
    const missing = await ebb(['rollout', 'status', 'app/nope', '-n', ctl.ns]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^ebb rollout: .*not found/);
    const bad = await ebb(['rollout', 'status', 'deployment/web']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage:');
  });
});

describe('ebb rollout pause, resume, history, undo, restart', () => {
  // Six rollouts and a dozen CLI processes in one story: a bound for the whole story, not for one wait.
  it('steers a rollout and goes back through the ControllerRevisions', { timeout: LONG_SCENARIO_MS }, async () => {
    const name = uniqueName('steer');
    await createApp(ctl.ns, name, { replicas: 2 });
    const v1 = (await settled(ctl.ns, name)).app.status?.updateRevision;
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const v2 = (await settled(ctl.ns, name)).app.status?.updateRevision;

    // Pause: a new template reaches no pod.
    expect((await ebb(['rollout', 'pause', `app/${name}`, '-n', ctl.ns])).stdout).toBe(`app.apps.ebb.dev/${name} paused\n`);
    expect((await ebb(['rollout', 'pause', `app/${name}`, '-n', ctl.ns])).stdout).toBe(`app.apps.ebb.dev/${name} already paused\n`);
    await patchApp(ctl.ns, name, { template: template(name, 'v3') });
    const held = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === s.app.metadata.generation && s.app.status?.updateRevision !== v2, {
      what: 'the paused App to see v3',
    });
    expect(held.pods.map((p) => p.spec.containers[0]?.image)).toEqual([image('v2'), image('v2')]);
    const paused = await ebb(['rollout', 'status', `app/${name}`, '-n', ctl.ns, '--watch=false']);
    expect(paused.stdout).toMatch(/ · paused/);
    expect((await ebb(['rollout', 'resume', `app/${name}`, '-n', ctl.ns])).stdout).toBe(`app.apps.ebb.dev/${name} resumed\n`);
    const v3 = (await settled(ctl.ns, name)).app.status?.updateRevision;

    // History: three revisions, the newest current.
    const hist = await ebb(['rollout', 'history', `app/${name}`, '-n', ctl.ns]);
    expect(hist.code).toBe(0);
    expect(hist.stdout.split('\n').slice(1, 4)).toEqual([
      expect.stringMatching(new RegExp(`^1\\s+${v1}\\s+${image('v1')}$`)),
      expect.stringMatching(new RegExp(`^2\\s+${v2}\\s+${image('v2')}$`)),
      expect.stringMatching(new RegExp(`^3\\s+${v3}\\s+current\\s+${image('v3')}$`)),
    ]);
    const one = await ebb(['rollout', 'history', `app/${name}`, '-n', ctl.ns, '--revision', '1']);
    expect(one.stdout).toContain(`image: ${image('v1')}`);

    // Undo: back to v2 (its revision renumbered 4), then to revision 1 by number.
    const undo = await ebb(['rollout', 'undo', `app/${name}`, '-n', ctl.ns]);
    expect(undo.stdout).toBe(`app.apps.ebb.dev/${name} rolled back to revision 2 (${v2})\n`);
    expect(imageOf(await getApp(ctl.ns, name))).toBe(image('v2'));
    await settled(ctl.ns, name, v2);
    expect((await revisionsOf(ctl.ns, name)).map((r) => [r.metadata.name, r.revision])).toEqual([
      [v1, 1],
      [v3, 3],
      [v2, 4],
    ]);
    const again = await ebb(['rollout', 'undo', `app/${name}`, '-n', ctl.ns, '--to-revision', '4']);
    expect(again.stdout).toBe(`app.apps.ebb.dev/${name} skipped rollback (current template already matches revision 4)\n`);
    const toOne = await ebb(['rollout', 'undo', `app/${name}`, '-n', ctl.ns, '--to-revision', '1']);
    expect(toOne.code).toBe(0);
    await settled(ctl.ns, name, v1);
    const missing = await ebb(['rollout', 'undo', `app/${name}`, '-n', ctl.ns, '--to-revision', '9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('unable to find revision 9');

    // Restart: a template annotation; every pod is replaced.
    const before = new Map((await podsOf(ctl.ns, name)).map((p) => [p.metadata.name, p.metadata.uid]));
    const restart = await ebb(['rollout', 'restart', `app/${name}`, '-n', ctl.ns]);
    expect(restart.stdout).toBe(`app.apps.ebb.dev/${name} restarted\n`);
    expect((await getApp(ctl.ns, name)).spec.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    const after = await settled(ctl.ns, name);
    for (const p of after.pods) expect(p.metadata.uid).not.toBe(before.get(p.metadata.name));
    expect(after.pods.map((p) => p.spec.containers[0]?.image)).toEqual([image('v1'), image('v1')]);
  });

  it('works as the kubectl plugin: kubectl ebb rollout ...', async () => {
    const name = uniqueName('plug');
    await createApp(ctl.ns, name, { replicas: 1, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } });
    await settled(ctl.ns, name);
    const env = cliEnv(await pluginDir());
    const status = await run(KUBECTL, ['ebb', 'rollout', 'status', `app/${name}`, '-n', ctl.ns], env);
    expect(status.stderr).toBe('');
    expect(status.stdout).toMatch(new RegExp(`app "${name}" rolled out: 1 pod at revision`));
    expect(status.code).toBe(0);
    // In place a restart stamp is never applied in place: every pod is recreated, and the command says so.
    const before = (await podsOf(ctl.ns, name)).map((p) => p.metadata.uid);
    const restart = await run(KUBECTL, ['ebb', 'rollout', 'restart', `app/${name}`, '-n', ctl.ns], env);
    expect(restart.stderr).toBe('');
    expect(restart.stdout).toBe(`app.apps.ebb.dev/${name} restarted (pods are recreated: a restart is never done in place)\n`);
    expect(restart.code).toBe(0);
    const after = await settled(ctl.ns, name);
    expect(after.pods.map((p) => p.metadata.uid)).not.toEqual(before);
    expect(after.pods.map((p) => p.metadata.uid).filter((uid) => before.includes(uid))).toEqual([]);
    const usage = await run(KUBECTL, ['ebb', 'rollout'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('kubectl ebb rollout: ebb rollout needs a subcommand');
  });
});
