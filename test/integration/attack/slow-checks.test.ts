/**
 * One tenant's slow analysis checks must not take every worker slot: with the default namespace cap (a share of
 * the live workers' slots), tenant A's Apps whose checks hang hold at most that share, and tenant B's new App is
 * reconciled to the end while A's checks still hang. Real watcher and worker, sandbox apiserver, real Redis.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisCheck } from '../../../src/api/analysis.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace } from '../support.ts';
import { controllerEnv, createApp, patchApp, settled, template, uniqueName } from '../app/harness.ts';

/** The worker's slots; the default cap (75 %) leaves one namespace 3 of them. */
const SLOTS = 4;
const SHARE = 3;

let nsA = '';
let nsB = '';
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;
let server: Server;
let base = '';
/** Slow requests waiting for their answer now, the most seen at once, and how many the checks gave up on. */
const hanging = new Set<ServerResponse>();
let mostAtOnce = 0;
let abandoned = 0;

function answer(res: ServerResponse): void {
  if (res.destroyed) return;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ok: true }));
}

beforeAll(async () => {
  server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    hanging.add(res);
    mostAtOnce = Math.max(mostAtOnce, hanging.size);
    res.on('close', () => {
      if (hanging.delete(res) && !res.writableEnded) abandoned++;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  [nsA, nsB] = await Promise.all([freshNamespace('atk-slow-a'), freshNamespace('atk-slow-b')]);
  // The cap is left at its default: this test is about what a default install does.
  const env = controllerEnv(`${nsA},${nsB}`, { EBB_WORKER_CONCURRENCY: String(SLOTS) });
  const log = createLogger('it-attack-slow', 'warn');
  watcher = await startWatcher(parseWatcherConfig(env), log);
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
}, 60_000);

afterAll(async () => {
  for (const res of hanging) answer(res);
  await worker?.stop();
  await watcher?.stop();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const check: AnalysisCheck = { name: 'slow', interval: '5s', count: 1, web: { url: '', successCondition: '$.ok == true', timeoutSeconds: 60 } };

/** An App of one pod at v1 whose rollout to v2 starts with a check that hangs until the test answers it. */
async function slowApp(ns: string): Promise<string> {
  const name = uniqueName('slow');
  const checks = [{ ...check, web: { ...check.web, url: `${base}/slow` } } as AnalysisCheck];
  const steps: CanaryStep[] = [{ analysis: ['slow'] }, { replicas: '100%' }];
  await createApp(ns, name, {
    replicas: 1,
    template: template(name, 'v1'),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps }, analysis: { checks } } },
  });
  return name;
}

describe("a tenant's slow checks", () => {
  it("hold at most the namespace's share of the slots, and another tenant's App settles while they hang", async () => {
    const names = await Promise.all(Array.from({ length: 6 }, () => slowApp(nsA)));
    await Promise.all(names.map((n) => settled(nsA, n, undefined, 120_000)));
    await Promise.all(names.map((n) => patchApp(nsA, n, { template: template(n, 'v2') })));
    // Tenant A's checks now hang in every slot its namespace may hold.
    await waitFor(() => (hanging.size >= SHARE ? true : undefined), { timeoutMs: 60_000, intervalMs: 100, what: `${SHARE} hanging checks of tenant A` });
    const other = uniqueName('atk-b');
    await createApp(nsB, other, { replicas: 2, template: template(other, 'v1') });
    const b = await settled(nsB, other, undefined, 120_000);
    const abandonedBeforeB = abandoned;
    expect(b.pods).toHaveLength(2);
    // Without the cap, A's checks hold all the slots until they give up (60 s each), and B starts only then.
    expect(abandonedBeforeB, "tenant B did not wait for tenant A's checks to give up their slots").toBeLessThan(SHARE);
    expect(mostAtOnce, "tenant A never held more than its namespace's share of the slots").toBe(SHARE);
  });
});
