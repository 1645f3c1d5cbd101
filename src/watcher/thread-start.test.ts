import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseWatcherConfig } from './config.ts';
import { workerThreadIfOn } from './thread-start.ts';

const base = { EBB_REDIS_URL: 'redis://127.0.0.1:6379', EBB_HTTP_ADDRESS: '127.0.0.1', EBB_WATCHER_WORKER_THREAD: 'true' };

describe('workerThreadIfOn', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-thread-start-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts none when the thread is off', async () => {
    const start = await workerThreadIfOn(parseWatcherConfig({ ...base, EBB_WATCHER_WORKER_THREAD: 'false' }), {});
    expect(start.stopMs).toBe(0);
    expect(start.described).toBe(false);
  });

  it("fails the watcher's start, naming the file, when the thread's kubeconfig cannot be read", async () => {
    const missing = join(dir, 'missing.kubeconfig');
    await expect(workerThreadIfOn(parseWatcherConfig({ ...base, EBB_WATCHER_WORKER_THREAD_KUBECONFIG: missing }), {})).rejects.toThrow(missing);
  });

  it("reads a good kubeconfig and bounds the thread's stop by the worker's shutdown timeout", async () => {
    const file = join(dir, 'worker.kubeconfig');
    await writeFile(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    const start = await workerThreadIfOn(parseWatcherConfig({ ...base, EBB_WATCHER_WORKER_THREAD_KUBECONFIG: file, EBB_SHUTDOWN_TIMEOUT: '20s' }), {});
    expect(start.stopMs).toBe(25_000);
    expect(start.described).toEqual({ heapMb: 256 });
  });
});
