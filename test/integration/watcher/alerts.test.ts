/**
 * The shipped alert rules in a real Prometheus (Debian's `prometheus`, which `make test` installs) scraping a real
 * watcher: a poison App whose rollout the cluster's admission holds makes `EbbRolloutHeld` fire. The rules are
 * deploy/components/monitoring/rules.yaml as shipped, with every `for` shortened to 1 s so the test need not
 * wait ten minutes; Prometheus scrapes and evaluates every second.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { startPrometheus, type RunningPrometheus } from '../../../harness/sandbox/prometheus.ts';
import { appRef } from '../../../src/api/group.ts';
import { ConditionType } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { controllerEnv, createApp, image, settled, uniqueName, until } from '../app/harness.ts';
import { refusePodsLabelled } from '../app/refuse-pods.ts';

interface Rules {
  spec: { groups: { name: string; rules: Record<string, unknown>[] }[] };
}
interface Alert {
  labels: { alertname: string };
  state: string;
  value: string;
}

const log = createLogger('it-alerts', 'warn');
/** The alerts about Apps (group ebb.rollouts); the controller's own alerts depend on the machine's load. */
const ROLLOUT_ALERTS = new Set(['EbbRolloutHeld', 'EbbRolloutAborted', 'EbbRolloutPastDeadline', 'EbbAppsQuarantined', 'EbbAppsFailingCreates']);
const cleanups: (() => Promise<unknown>)[] = [];
let ns = '';
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;
let prometheus: RunningPrometheus | undefined;

const template = (name: string, blocked: string, tag: string) => ({
  metadata: { labels: { app: name, 'ebb-test/blocked': blocked } },
  spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
});

async function alerts(): Promise<Alert[]> {
  const res = await fetch(`${prometheus?.url ?? ''}/api/v1/alerts`);
  return ((await res.json()) as { data: { alerts: Alert[] } }).data.alerts;
}

beforeAll(async () => {
  ns = await freshNamespace('alerts');
  const env = controllerEnv(ns);
  watcher = await startWatcher(parseWatcherConfig(env), log);
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
  const shipped = parse(await readFile(join(PROJECT_ROOT, 'deploy/components/monitoring/rules.yaml'), 'utf8')) as Rules;
  const groups = shipped.spec.groups.map((g) => ({ ...g, rules: g.rules.map((r) => ({ ...r, for: '1s' })) }));
  prometheus = await startPrometheus([`127.0.0.1:${watcher.httpPort}`], undefined, stringify({ groups }));
});

afterAll(async () => {
  await prometheus?.stop();
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await worker?.stop();
  await watcher?.stop();
});

describe('alerts in a real Prometheus', () => {
  it('EbbRolloutHeld fires for an App whose rollout the cluster admission holds, and no other rollout alert does', async () => {
    await refusePodsLabelled(ns, 'ebb-test/blocked', cleanups);
    const name = uniqueName('poison');
    await createApp(ns, name, {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
      template: template(name, 'no', 'v1'),
    });
    await settled(ns, name);
    const rolloutAlerts = (all: Alert[]): string[] =>
      all.filter((a) => a.state === 'firing' && ROLLOUT_ALERTS.has(a.labels.alertname)).map((a) => a.labels.alertname);
    expect(rolloutAlerts(await alerts())).toEqual([]);
    await sandbox().rest.patch(appRef(ns, name), { spec: { template: template(name, 'yes', 'v2') } }, PatchType.merge);
    await until(ns, name, (s) => s.app.status?.conditions?.some((c) => c.type === ConditionType.rolloutHeld && c.status === 'True') === true, {
      what: 'RolloutHeld',
    });
    const firing = await waitFor(
      async () => {
        const all = await alerts();
        return all.some((a) => a.labels.alertname === 'EbbRolloutHeld' && a.state === 'firing') ? all : undefined;
      },
      { timeoutMs: 60_000, what: 'EbbRolloutHeld firing in Prometheus' },
    );
    expect(rolloutAlerts(firing)).toEqual(['EbbRolloutHeld']);
    expect(Number(firing.find((a) => a.labels.alertname === 'EbbRolloutHeld')?.value)).toBe(1);
  });
});
