/**
 * Attacks through a tenant's analysis checks, against the real `ebb worker` process run as the manifest runs it
 * (its NODE_OPTIONS read from deploy/components/worker.yaml) and the real watcher, two tenants' namespaces:
 * - a web check of tenant A answering 150 MB: the worker's peak RSS stays under the manifest's memory limit,
 *   the measurement is an error ("too large": it could not be taken), the worker lives on, and tenant B's App keeps reconciling;
 * - checks pointing where ebb must not read (a metadata address the installer even allowed, a metadata header,
 *   a host not allowed for the namespace) are refused without a request, and an answer a check does reach
 *   shows in status and Events only as its kind and size, never as its text.
 * The check server listens on loopback, so the worker allows `local` networks, and allowed hosts are set
 * per namespace (the install's defaults refuse both: the unit tests of `workers/egress` cover them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeasurementPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import { appRef } from '../../../src/api/group.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { createLogger } from '../../../src/common/log.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { manifestMemoryLimitBytes, manifestNodeOptions, peakRssBytes } from './manifest.ts';
import { controllerEnv, createApp, image, patchApp, settled, template, uniqueName, until, type Snapshot } from '../app/harness.ts';

const MiB = 1 << 20;
const SECRET = 'ebb-attack-secret-7f3a9c';

/** 150 MB of one JSON string, streamed without a Content-Length; resolves `started` on the first request. */
function huge(res: ServerResponse, onStart: () => void): void {
  onStart();
  const chunk = Buffer.alloc(MiB, 'a');
  let sent = 0;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"v":"');
  const pump = (): void => {
    while (!res.destroyed && sent < 150) {
      sent++;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end('"}');
  };
  pump();
}

let nsA = '';
let nsB = '';
let watcher: RunningWatcher | undefined;
let worker: ChildProcess | undefined;
let server: Server;
let base = '';
const seen: { url: string; metadataFlavor: boolean }[] = [];
let hugeStarted: () => void = () => undefined;
const hugeAsked = new Promise<void>((r) => (hugeStarted = r));
let stderr = '';

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ url: req.url ?? '', metadataFlavor: req.headers['metadata-flavor'] !== undefined });
    if (req.url === '/huge') return huge(res, hugeStarted);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ token: SECRET, rate: 0.01 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  [nsA, nsB] = await Promise.all([freshNamespace('atk-check-a'), freshNamespace('atk-check-b')]);
  const env = controllerEnv(`${nsA},${nsB}`, {
    EBB_LOG_LEVEL: 'error',
    EBB_CHECK_NETWORKS: 'local',
    // Tenant A's checks may call the loopback server and, as a careless installer might allow, the metadata address.
    EBB_CHECK_ALLOWED_HOSTS: `${nsA}/127.0.0.1,${nsA}/169.254.169.254`,
  });
  watcher = await startWatcher(parseWatcherConfig(env), createLogger('it-attack-check', 'warn'));
  worker = spawn(process.execPath, [join(PROJECT_ROOT, 'src/cli/main.ts'), 'worker'], {
    env: { ...process.env, ...env, NODE_OPTIONS: await manifestNodeOptions('worker') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  worker.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
}, 60_000);

afterAll(async () => {
  if (worker?.pid !== undefined && worker.exitCode === null) process.kill(worker.pid, 'SIGKILL');
  await watcher?.stop();
  await new Promise<void>((r) => server.close(() => r()));
});

const probe = { exec: { command: ['true'] }, periodSeconds: 1 };
const probed = (name: string, tag: string): ReturnType<typeof template> => ({
  metadata: { labels: { app: name } },
  spec: { containers: [{ name: 'main', image: image(tag), readinessProbe: probe }], terminationGracePeriodSeconds: 1 },
});

/** An App of one pod whose rollout starts with an analysis step of `checks`; settled at v1, then rolled to v2. */
async function analysedApp(ns: string, prefix: string, checks: AnalysisCheck[], name = uniqueName(prefix)): Promise<string> {
  const steps: CanaryStep[] = [{ analysis: checks.map((c) => c.name) }, { replicas: '100%' }];
  await createApp(ns, name, {
    replicas: 1,
    template: probed(name, 'v1'),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps }, analysis: { checks } } },
  });
  await settled(ns, name, undefined, 90_000);
  await patchApp(ns, name, { template: probed(name, 'v2') });
  return name;
}

const web = (name: string, url: string, extra: Partial<NonNullable<AnalysisCheck['web']>> = {}): AnalysisCheck => ({
  name,
  interval: '5s',
  count: 1,
  web: { url, successCondition: "$.token == 'x'", failureCondition: "$.token == 'y'", ...extra },
});

const measuredAll = (s: Snapshot, n: number): boolean => (s.app.status?.analysis?.runs ?? []).filter((r) => r.measurements.length > 0).length === n;

const messageOf = (s: Snapshot, check: string): string => s.app.status?.analysis?.runs.find((r) => r.name === check)?.measurements.at(-1)?.message ?? '';

async function eventText(ns: string): Promise<string> {
  return JSON.stringify(await sandbox().rest.list({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }));
}

describe('a check answering 150 MB', () => {
  it("stays within the worker's memory limit, is an error, and another tenant keeps reconciling", async () => {
    const other = uniqueName('atk-b');
    await createApp(nsB, other, { replicas: 1, template: template(other, 'v1') });
    await settled(nsB, other, undefined, 90_000);
    // The App measures again at each interval until it is gone: deleted whatever happens, so a failure here
    // leaves no 150 MB answers streaming into the next test.
    const name = uniqueName('atk-huge');
    try {
      await analysedApp(
        nsA,
        'atk-huge',
        [web('huge', `${base}/huge`, { successCondition: '$.v == 1', failureCondition: undefined, timeoutSeconds: 60 })],
        name,
      );
      await hugeAsked;
      // While tenant A's answer streams, tenant B scales.
      await patchApp(nsB, other, { replicas: 2 });
      const measured = await until(nsA, name, (s) => measuredAll(s, 1), { timeoutMs: 90_000, what: 'the huge check measured' });
      expect(worker?.exitCode, `the worker exited: ${stderr}`).toBeNull();
      const peak = await peakRssBytes(worker?.pid ?? 0);
      const memoryLimit = await manifestMemoryLimitBytes('worker');
      expect(peak, `peak RSS ${Math.round(peak / MiB)} MiB against the manifest's ${memoryLimit / MiB} MiB`).toBeLessThan(memoryLimit);
      const m = measured.app.status?.analysis?.runs[0]?.measurements.at(-1);
      expect(m?.phase).toBe(MeasurementPhase.error);
      expect(m?.message).toContain('too large');
      await settled(nsB, other, undefined, 90_000);
    } finally {
      await sandbox()
        .rest.delete(appRef(nsA, name))
        .catch((err: unknown) => {
          if (!isKubeError(err, 'NotFound')) throw err;
        });
    }
  });
});

describe('checks pointing where ebb must not read', () => {
  it('are refused before any request, and an answer reached is recorded by its kind, not its text', async () => {
    const before = seen.length;
    const a = await analysedApp(nsA, 'atk-read', [
      web('metadata-ip', 'http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token'),
      web('metadata-header', `${base}/header`, { headers: [{ name: 'Metadata-Flavor', value: 'Google' }] }),
      web('echo', `${base}/echo`),
    ]);
    const b = await analysedApp(nsB, 'atk-cross', [web('cross', `${base}/cross`)]);
    const sa = await until(nsA, a, (s) => measuredAll(s, 3), { timeoutMs: 90_000, what: `App ${a} measured` });
    const sb = await until(nsB, b, (s) => measuredAll(s, 1), { timeoutMs: 90_000, what: `App ${b} measured` });
    expect(messageOf(sa, 'metadata-ip')).toContain('169.254.169.254 is a cloud metadata address, which may not be called');
    expect(messageOf(sa, 'metadata-header')).toContain('header Metadata-Flavor may not be sent');
    expect(messageOf(sa, 'echo')).toBe("neither $.token == 'x' nor $.token == 'y' holds (a string of 24 characters)");
    expect(messageOf(sb, 'cross')).toContain(`is not an allowed check host for namespace ${nsB}`);
    // Refused requests are errors (the measurement could not be taken); the answer that holds neither condition is
    // inconclusive. None passes.
    const phases = (s: Snapshot): Record<string, string | undefined> =>
      Object.fromEntries((s.app.status?.analysis?.runs ?? []).map((r) => [r.name, r.measurements.at(-1)?.phase]));
    expect(phases(sa)).toEqual({ 'metadata-ip': MeasurementPhase.error, 'metadata-header': MeasurementPhase.error, echo: MeasurementPhase.inconclusive });
    expect(phases(sb)).toEqual({ cross: MeasurementPhase.error });
    // Only the allowed check's requests reached the server.
    const urls = seen.slice(before).map((h) => h.url);
    expect(urls.length).toBeGreaterThan(0);
    expect(new Set(urls)).toEqual(new Set(['/echo']));
    expect(seen.some((h) => h.metadataFlavor)).toBe(false);
    const recorded = JSON.stringify([sa.app.status, sb.app.status]) + (await eventText(nsA)) + (await eventText(nsB));
    expect(recorded).not.toContain(SECRET);
  });
});
