/**
 * The watcher's worker thread (EBB_WATCHER_WORKER_THREAD), against the sandbox and its Redis, with no worker
 * process: the watcher's thread reconciles an App end to end, and its endpoint serves the thread's readiness and
 * metrics. An App whose reconcile allocates past the thread's heap limit (a test entry, heap-hog-thread.ts) ends
 * the thread alone: the watcher starts it again and keeps watching, and another tenant's App still settles and
 * rolls out.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { controllerEnv, createApp, patchApp, settled, template, uniqueName } from '../app/harness.ts';
import { freshNamespace } from '../support.ts';

const log = createLogger('it-worker-thread', 'warn');
const HOG_ENTRY = new URL('./heap-hog-thread.ts', import.meta.url);

const get = (w: RunningWatcher, path: string): Promise<Response> => fetch(`http://127.0.0.1:${w.httpPort}${path}`, { signal: AbortSignal.timeout(10_000) });

const ready = (w: RunningWatcher): Promise<true> =>
  waitFor(async () => ((await get(w, '/readyz')).status === 200 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: 'the watcher ready, its thread running',
  });

/** `ebb_worker_thread_ends_total{end="heap-limit"}` on the watcher's /metrics. */
async function heapLimitEnds(w: RunningWatcher): Promise<number> {
  const text = await (await get(w, '/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith('ebb_worker_thread_ends_total{end="heap-limit"}'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe("the watcher's worker thread", () => {
  it('reconciles an App end to end with no worker process; the watcher serves its readiness and metrics; stop ends it', async () => {
    const ns = await freshNamespace('wt');
    const watcher = await startWatcher(parseWatcherConfig(controllerEnv(ns, { EBB_WATCHER_WORKER_THREAD: 'true' })), log);
    try {
      await ready(watcher);
      const name = uniqueName('web');
      await createApp(ns, name, { replicas: 2, template: template(name, 'v1') });
      await settled(ns, name);
      await patchApp(ns, name, { template: template(name, 'v2') });
      const done = await settled(ns, name);
      expect(done.pods.map((p) => p.spec?.containers[0]?.image)).toEqual([
        template(name, 'v2').spec.containers[0]?.image,
        template(name, 'v2').spec.containers[0]?.image,
      ]);
      const metrics = await (await get(watcher, '/metrics')).text();
      const appDone = metrics.split('\n').filter((l) => l.startsWith('ebb_reconcile_total{') && l.includes('kind="App"') && l.includes('result="done"'));
      expect(appDone.length, "the thread counts its reconciles on the watcher's /metrics").toBeGreaterThan(0);
      expect(appDone.every((l) => l.includes('thread="watcher"'))).toBe(true);
      expect(metrics, "the watcher's own metrics are still there").toMatch(/^ebb_watch_events_total\{/m);
      expect(watcher.workerThread?.starts()).toBe(1);
    } finally {
      await watcher.stop();
    }
  });

  it("an App past the thread's heap limit ends the thread alone; it is started again while the watcher serves another tenant", async () => {
    const hogNs = await freshNamespace('wt-hog');
    const okNs = await freshNamespace('wt-ok');
    const env = controllerEnv(`${hogNs},${okNs}`, {
      EBB_WATCHER_WORKER_THREAD: 'true',
      EBB_WATCHER_WORKER_THREAD_HEAP: '64',
      // A reconcile that ended with its thread is retried once its lock expires: keep that short.
      EBB_QUEUE_LOCK_DURATION: '5s',
      EBB_QUARANTINE_RETRY_AFTER: '3s',
    });
    const watcher = await startWatcher(parseWatcherConfig(env), log, { workerThreadEntry: HOG_ENTRY });
    try {
      await ready(watcher);
      const ok = uniqueName('ok');
      await createApp(okNs, ok, { replicas: 2, template: template(ok, 'v1') });
      await settled(okNs, ok);

      await createApp(hogNs, uniqueName('hog'), { replicas: 1 });
      await waitFor(async () => ((await heapLimitEnds(watcher)) >= 1 ? true : undefined), {
        timeoutMs: 120_000,
        intervalMs: 200,
        what: 'the thread ended by its heap limit',
      });
      // The watcher went on: its watches, its health, its endpoint.
      expect((await get(watcher, '/healthz')).status).toBe(200);
      expect(Object.values(watcher.states()).every((s) => s === 'watching')).toBe(true);

      // The other tenant's change is reconciled by a thread started again (between the hog's ends, then past its quarantine).
      await patchApp(okNs, ok, { template: template(ok, 'v2') });
      await settled(okNs, ok, undefined, 200_000);
      expect(watcher.workerThread?.starts()).toBeGreaterThanOrEqual(2);
      await ready(watcher);
    } finally {
      await watcher.stop();
    }
  });
});
