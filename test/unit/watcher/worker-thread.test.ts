/**
 * The watcher's worker thread's lifecycle (`src/watcher/worker-thread.ts`) with real threads running small
 * entries of their own (./threads): readiness and metrics asked over the port, restarts after the heap limit with
 * back-off, and a stop that ends a thread that does not stop by itself.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { startWorkerThread, type WorkerThreadOptions } from '../../../src/watcher/worker-thread.ts';
import type { ThreadEnd } from '../../../src/watcher/worker-thread-plan.ts';

const entry = (name: string): URL => new URL(`./threads/${name}.ts`, import.meta.url);
const base = (name: string): WorkerThreadOptions => ({ env: {}, heapMb: 32, stopTimeoutMs: 10_000, log: createLogger('test', 'silent'), entry: entry(name) });

describe("the watcher's worker thread", () => {
  it('is not ready until its thread says it started; then serves its readiness and metrics; stop ends it', async () => {
    const thread = startWorkerThread(base('answering'));
    try {
      expect(await thread.readiness()).toBe('worker thread starting');
      await waitFor(async () => ((await thread.readiness()) === undefined ? true : undefined), { timeoutMs: 30_000, intervalMs: 20, what: 'the thread ready' });
      expect(thread.state()).toBe('running');
      expect(await thread.metrics()).toBe('fake_reconciles_total{thread="watcher"} 7\n');
    } finally {
      await thread.stop();
    }
    expect(thread.starts()).toBe(1);
    expect(await thread.readiness()).toBe('worker thread stopping');
    expect(await thread.metrics()).toBe('');
  });

  it('starts a thread ended by its heap limit again, with back-off, until stopped', async () => {
    const ends: ThreadEnd[] = [];
    const thread = startWorkerThread({ ...base('hog'), policy: { baseMs: 50, capMs: 200, healthyAfterMs: 60_000 }, onEnd: (e) => ends.push(e) });
    try {
      await waitFor(() => (ends.length >= 3 ? true : undefined), { timeoutMs: 60_000, intervalMs: 20, what: 'three ends' });
      expect(new Set(ends)).toEqual(new Set(['heap-limit']));
      expect(thread.starts()).toBeGreaterThanOrEqual(3);
      expect(await thread.readiness()).toMatch(/^worker thread (starting|restarting \(it ended: heap-limit\))$/);
    } finally {
      await thread.stop();
    }
    const after = thread.starts();
    expect(thread.state()).toBe('stopping');
    // Stopped means stopped: no start after it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(thread.starts()).toBe(after);
  });

  it('ends a thread that does not stop within its stop timeout, and one that does not answer is not ready', async () => {
    const thread = startWorkerThread({ ...base('deaf'), stopTimeoutMs: 200 });
    await waitFor(() => (thread.state() === 'running' ? true : undefined), { timeoutMs: 30_000, intervalMs: 20, what: 'the thread started' });
    expect(await thread.readiness()).toBe('worker thread not answering');
    const t0 = Date.now();
    await thread.stop();
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(thread.starts()).toBe(1);
  });
});
