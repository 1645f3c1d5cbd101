/**
 * One tenant's slow analysis checks hold no reconcile slot: measurements are taken by the worker's measure pool
 * (the `measure` queue), so with a single reconcile slot, tenant A's checks hang in more requests than that slot
 * could hold, tenant B's new App is reconciled to the end while they all still hang (no A check had to give up
 * first), one namespace's hanging measurements stay within its share of the measure slots, and once the server
 * answers, A's rollouts get their measurements and complete. Real watcher and worker, sandbox apiserver, real Redis.
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

/** One reconcile slot: before measurements had a pool of their own, a hanging check held it. */
const SLOTS = 1;
/** The measure pool's slots (the default) and one namespace's share of them (the default 50 %). */
const MEASURE_SLOTS = 8;
const MEASURE_SHARE = 4;
const APPS = 6;

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
/** Once true, every request is answered at once. */
let answering = false;

function answer(res: ServerResponse): void {
  if (res.destroyed || res.writableEnded) return;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ok: true }));
}

beforeAll(async () => {
  server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    if (answering) return answer(res);
    hanging.add(res);
    mostAtOnce = Math.max(mostAtOnce, hanging.size);
    res.on('close', () => {
      if (hanging.delete(res) && !res.writableEnded) abandoned++;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  [nsA, nsB] = await Promise.all([freshNamespace('atk-slow-a'), freshNamespace('atk-slow-b')]);
  // The caps are left at their defaults: this test is about what a default install does.
  const env = controllerEnv(`${nsA},${nsB}`, { EBB_WORKER_CONCURRENCY: String(SLOTS) });
  expect(parseWorkerConfig(env).measureConcurrency).toBe(MEASURE_SLOTS);
  const log = createLogger('it-attack-slow', 'warn');
  watcher = await startWatcher(parseWatcherConfig(env), log);
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
}, 60_000);

afterAll(async () => {
  answering = true;
  for (const res of hanging) answer(res);
  await worker?.stop();
  await watcher?.stop();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** The longest a check may wait for its answer: B must settle without waiting for any of it. */
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
  it('hold no reconcile slot: another tenant settles while they hang, and they are judged once answered', async () => {
    const names = await Promise.all(Array.from({ length: APPS }, () => slowApp(nsA)));
    await Promise.all(names.map((n) => settled(nsA, n, undefined, 120_000)));
    await Promise.all(names.map((n) => patchApp(nsA, n, { template: template(n, 'v2') })));
    // Tenant A's checks hang in more requests than the worker has reconcile slots: a reconcile holds none of them.
    await waitFor(() => (hanging.size >= MEASURE_SHARE ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: `${MEASURE_SHARE} hanging checks of tenant A (the worker has ${SLOTS} reconcile slot)`,
    });
    const other = uniqueName('atk-b');
    await createApp(nsB, other, { replicas: 2, template: template(other, 'v1') });
    const b = await settled(nsB, other, undefined, 120_000);
    const abandonedBeforeB = abandoned;
    const hangingWhenBSettled = hanging.size;
    expect(b.pods).toHaveLength(2);
    // In the reconcile, A's hanging check held the only slot until it gave up (60 s), and B started only then.
    expect(abandonedBeforeB, "tenant B did not wait for any of tenant A's checks to give up").toBe(0);
    expect(hangingWhenBSettled, "tenant A's checks still hung when B settled").toBeGreaterThan(SLOTS);
    expect(mostAtOnce, "tenant A's measurements running at once stay within its share of the measure slots").toBe(MEASURE_SHARE);
    // The server answers: every A measurement, those waiting for their namespace's turn too, is taken and judged.
    answering = true;
    for (const res of hanging) answer(res);
    const done = await Promise.all(names.map((n) => settled(nsA, n, undefined, 120_000)));
    for (const s of done) {
      const run = s.app.status?.analysis?.runs.find((r) => r.name === 'slow');
      expect(run?.phase).toBe('Successful');
      expect(run?.measurements.map((m) => m.phase)).toEqual(['Successful']);
    }
    expect(abandoned, 'no check of tenant A gave up: each was answered while it waited').toBe(0);
  });
});
