/**
 * Redis-backed queue tests: one real redis-server per test file (started with the sandbox's startRedis in a
 * temp dir), a unique key prefix per test, and cleanup of every queue, worker and connection a test made.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startRedis, type RedisServer } from '../../../harness/sandbox/redis.ts';
import { parseQueueConfig, type QueueConfig } from '../../../src/queue/settings.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue, createTimersQueue, type ReconcileQueue, type TimersQueue } from '../../../src/queue/queues.ts';

interface Closable {
  close(force?: boolean): Promise<unknown>;
}

export interface RedisFixture {
  url(): string;
  /** A config with a fresh `{hash-tag}` prefix, so tests never see each other's keys. */
  config(env?: Record<string, string>): QueueConfig;
  connection(forWorker: boolean): Redis;
  reconcileQueue(cfg: QueueConfig): ReconcileQueue;
  timersQueue(cfg: QueueConfig): TimersQueue;
  worker<T>(name: string, processor: Processor<T, void, string>, opts: WorkerOptions): Worker<T, void, string>;
  /** Errors emitted by workers created here (a test may assert on them; they never go unobserved). */
  workerErrors: Error[];
}

export function useRedis(): RedisFixture {
  let server: RedisServer | undefined;
  let dir = '';
  let closables: Closable[] = [];
  let connections: Redis[] = [];
  const workerErrors: Error[] = [];

  // Starting redis-server (and waiting for its PONG) takes far longer than vitest's 10 s hook default on a loaded machine.
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-queue-test-'));
    server = await startRedis({ dir });
  }, 60_000);

  afterEach(async () => {
    // Workers and queues first (they use the connections), then the connections they were given.
    // Forced: a test that failed may leave a processor blocked forever.
    for (const c of closables.reverse()) await c.close(true).catch(() => undefined);
    for (const c of connections) c.disconnect();
    closables = [];
    connections = [];
    workerErrors.length = 0;
  });

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  const fixture: RedisFixture = {
    url: () => {
      if (!server) throw new Error('redis not started');
      return server.url;
    },
    config: (env = {}) => parseQueueConfig({ EBB_REDIS_URL: fixture.url(), EBB_QUEUE_PREFIX: `{t${randomBytes(4).toString('hex')}}`, ...env }),
    connection: (forWorker) => {
      const c = redisConnection(fixture.url(), { forWorker, name: forWorker ? 'test-worker' : 'test-producer' });
      connections.push(c);
      return c;
    },
    reconcileQueue: (cfg) => {
      const q = createReconcileQueue(fixture.connection(false), cfg);
      closables.push(q);
      return q;
    },
    timersQueue: (cfg) => {
      const q = createTimersQueue(fixture.connection(false), cfg);
      closables.push(q);
      return q;
    },
    worker: <T>(name: string, processor: Processor<T, void, string>, opts: WorkerOptions) => {
      const w = new Worker<T, void, string>(name, processor, opts);
      w.on('error', (err) => workerErrors.push(err));
      closables.push(w);
      return w;
    },
    workerErrors,
  };
  return fixture;
}

export const sleepMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A promise with its resolve function, for gating processors. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** A kubeconfig for a worker whose reconcilers are fakes: it names an apiserver nobody serves. */
export async function writeUnusedKubeconfig(path: string): Promise<void> {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'unused' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  };
  await writeFile(path, JSON.stringify(config));
}
