/**
 * `ebb rollout` on rollouts judged by analysis, a child process against the sandbox with the real watcher
 * and worker:
 * - `history` keeps the analysis outcome of each revision: a rollout whose checks passed, then one whose
 *   check failed and aborted it, both shown, and `--revision N` lists a revision's checks;
 * - `promote` lifts the pause a background check set when it turned inconclusive (ebb's own pause, whatever
 *   the Paused condition's reason), and the rollout completes.
 *
 * The checks are web checks against a local server answering `{"errorRate": …}` per App and path.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { PauseCause, RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { createApp, image, patchApp, revisionOf, revisionsOf, settled, type Snapshot, uniqueName, until, useController } from '../app/harness.ts';
import { ebb } from './cli.ts';

const ctl = useController('cli-analysis');
const probe = { exec: { command: ['true'] }, periodSeconds: 1 };
const probed = (name: string, ref: string): AppSpec['template'] => ({
  metadata: { labels: { app: name } },
  spec: { containers: [{ name: 'main', image: ref, startupProbe: probe, readinessProbe: probe }], terminationGracePeriodSeconds: 1 },
});
const allAt = (s: Snapshot, revision: string, n: number) =>
  s.pods.length === n && s.pods.every((p) => !p.metadata.deletionTimestamp && isRunningAndReady(p) && revisionOf(p) === revision);

describe('ebb rollout on analysed rollouts', () => {
  let server: Server;
  let base = '';
  /** The error rate answered, by `<path>?app=<name>`; unset: 0 (passing). */
  const rate = new Map<string, unknown>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ errorRate: rate.get(req.url ?? '') ?? 0 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const check = (name: string, path: string, extra: Partial<AnalysisCheck> = {}): AnalysisCheck => ({
    name,
    interval: '1s',
    web: { url: `${base}${path}`, successCondition: '$.errorRate < 0.01', failureCondition: '$.errorRate > 0.05' },
    ...extra,
  });

  it('history shows the analysis outcome of both rollouts, and --revision N the checks of one', async () => {
    const name = uniqueName('hist');
    const path = `/step?app=${name}`;
    const steps: CanaryStep[] = [{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }];
    await createApp(ctl.ns, name, {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      template: probed(name, image('v1')),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps }, analysis: { checks: [check('errors', path, { count: 2 })] } } },
    });
    const v1 = (await settled(ctl.ns, name, undefined, 90_000)).app.status?.updateRevision ?? '';

    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    const done = await until(ctl.ns, name, (s) => s.app.status?.currentRevision !== v1 && allAt(s, s.app.status?.currentRevision ?? '', 2), {
      timeoutMs: 120_000,
      what: 'the v2 rollout to pass its analysis and complete',
    });
    const v2 = done.app.status?.currentRevision ?? '';

    rate.set(path, 0.5);
    await patchApp(ctl.ns, name, { template: probed(name, image('v3')) });
    const back = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined && allAt(s, v2, 2), {
      timeoutMs: 120_000,
      what: 'the v3 rollout aborted by its check, back at v2',
    });
    const v3 = back.app.status?.abort?.revision ?? '';
    expect(back.app.status?.analysisHistory).toEqual([expect.objectContaining({ revision: v2, outcome: 'Successful' })]);

    const hist = await ebb(['rollout', 'history', `app/${name}`, '-n', ctl.ns]);
    expect(hist.stderr).toBe('');
    expect(hist.code).toBe(0);
    const lines = hist.stdout.split('\n');
    expect(lines[0]).toMatch(/^REVISION\s+NAME\s+STATUS\s+ANALYSIS\s+IMAGES$/);
    expect(lines.slice(1, 4)).toEqual([
      expect.stringMatching(new RegExp(`^1\\s+${v1}\\s+-\\s+${image('v1')}$`)),
      expect.stringMatching(new RegExp(`^2\\s+${v2}\\s+current \\(updating from\\)\\s+Successful\\s+${image('v2')}$`)),
      expect.stringMatching(new RegExp(`^3\\s+${v3}\\s+aborted \\(AnalysisFailed\\)\\s+Failed\\s+${image('v3')}$`)),
    ]);

    const numbers = new Map((await revisionsOf(ctl.ns, name)).map((r) => [r.metadata.name, r.revision]));
    const passed = await ebb(['rollout', 'history', `app/${name}`, '-n', ctl.ns, '--revision', String(numbers.get(v2))]);
    expect(passed.stdout).toContain('analysis: Successful (last measured ');
    expect(passed.stdout).toMatch(/^ {2}errors\s+2\s+Successful\s+2\s+0\s+0\s+0\s+0$/m);
    const failed = await ebb(['rollout', 'history', `app/${name}`, '-n', ctl.ns, '--revision', String(numbers.get(v3))]);
    expect(failed.stdout).toContain('analysis: Failed (last measured ');
    expect(failed.stdout).toMatch(/^ {2}errors\s+2\s+Failed\s+\d+\s+1\s+0\s+0\s+0\.5 \(/m);
    expect(failed.stdout).toContain(`image: ${image('v3')}`);
  });

  it('promote lifts the pause a background check set when it turned inconclusive; the rollout completes', async () => {
    const name = uniqueName('bgprom');
    const path = `/background?app=${name}`;
    // Neither condition holds: inconclusive.
    rate.set(path, 0.03);
    // A step check that keeps passing holds the canary step while the background check measures.
    const gate = check('gate', `/gate?app=${name}`, { count: 10_000 });
    const steps: CanaryStep[] = [{ replicas: 1 }, { analysis: ['gate'] }, { replicas: '100%' }];
    await createApp(ctl.ns, name, {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      template: probed(name, image('v1')),
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { canary: { steps }, analysis: { checks: [check('health', path), gate], background: ['health'] } },
      },
    });
    const v1 = (await settled(ctl.ns, name, undefined, 90_000)).app.status?.updateRevision ?? '';
    await patchApp(ctl.ns, name, { template: probed(name, image('v2')) });
    const pausedSeen = (s: Snapshot) =>
      s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.observedGeneration === s.app.metadata.generation;
    const held = await until(ctl.ns, name, pausedSeen, {
      timeoutMs: 90_000,
      what: 'the rollout paused by the background check',
    });
    const v2 = held.app.status?.updateRevision ?? '';
    expect(held.app.metadata.annotations?.[RolloutAnnotation.pausedBy]).toBe(`${PauseCause.analysisInconclusive}/${v2}`);

    rate.set(path, 0.001);
    // Guarded by the App's resourceVersion while the checks write the status every second: the command reads the
    // App again and asks again when the App changed before its write landed.
    const promote = await ebb(['rollout', 'promote', `app/${name}`, '-n', ctl.ns]);
    expect(promote.stderr).toBe('');
    expect(promote.code).toBe(0);
    expect(promote.stdout).toContain(`ebb's pause lifted (${PauseCause.analysisInconclusive})`);
    const done = await until(ctl.ns, name, (s) => s.app.status?.currentRevision === v2 && allAt(s, v2, 2), {
      timeoutMs: 120_000,
      what: `App ${name} rolled out to ${v2}`,
    });
    expect(done.app.spec.updateStrategy?.rollingUpdate?.paused).not.toBe(true);
    expect(done.app.metadata.annotations?.[RolloutAnnotation.pausedBy]).toBeUndefined();
    expect(v2).not.toBe(v1);
  });
});
