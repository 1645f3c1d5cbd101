/**
 * The measure queue on a real Redis: the KEDA backlog counts measurements waiting alone; the reconcile's desk asks
 * once per measurement however often it plans (BullMQ's dedup by job id), reads a stored result back, and asks
 * again under the same id once a job ended without one (Redis lost the result, the job failed for good).
 */
import { describe, expect, it } from 'vitest';
import { MeasurementPhase, type AnalysisCheck, type Measurement } from '../../../src/api/analysis.ts';
import type { App } from '../../../src/api/app.ts';
import type { Stored } from '../../../src/kube/types.ts';
import { workerBacklog } from '../../../src/queue/backlog.ts';
import { measureQueue } from '../../../src/queue/measure-queue.ts';
import type { MeasureRequest } from '../../../src/workers/app/model/analysis-io.ts';
import { measureDesk } from '../../../src/workers/measure/desk.ts';
import { redisResultStore } from '../../../src/workers/measure/store.ts';
import { useRedis } from './support.ts';

const web: AnalysisCheck = { name: 'errors', interval: '10s', web: { url: 'http://checks.example/errors', successCondition: '$.ok == true' } };
const vars = { APP: 'web', NAMESPACE: 'team-a', REVISION: 'web-2', STABLE_REVISION: 'web-1', CANARY_PODS: 'web-0' };
const request: MeasureRequest = { key: '-/errors', check: web, vars, due: '2026-01-01T00:00:00.000Z' };
const app = { metadata: { namespace: 'team-a', name: 'web', uid: 'uid-1' } } as Stored<App>;
const ok: Measurement = { phase: MeasurementPhase.successful, value: 'true', measuredAt: '2026-01-01T00:00:01.000Z' };

describe('the measure queue', () => {
  const redis = useRedis();

  it('counts in the backlog KEDA scales on, with no reconcile waiting', async () => {
    const cfg = redis.config();
    const reconcile = redis.reconcileQueue(cfg);
    const queue = measureQueue(redis.connection(false), cfg);
    try {
      expect((await workerBacklog([reconcile], queue, 30_000)).total).toBe(0);
      await measureDesk(redisResultStore(redis.connection(false), cfg.prefix), queue).collect(app, [request]);
      expect((await workerBacklog([reconcile], queue, 30_000)).total).toBe(1);
    } finally {
      await queue.close();
    }
  });

  it('holds one job per measurement, however often a reconcile asks, and hands back its stored result', async () => {
    const cfg = redis.config();
    const client = redis.connection(false);
    const queue = measureQueue(client, cfg);
    const store = redisResultStore(client, cfg.prefix);
    const desk = measureDesk(store, queue);
    try {
      for (let i = 0; i < 3; i++) expect((await desk.collect(app, [request])).size).toBe(0);
      const jobs = await queue.getJobs(['waiting']);
      expect(jobs).toHaveLength(1);
      const id = jobs[0]?.id ?? '';
      // The job ends without a result (Redis lost it, or it failed for good): its id is free, the next ask adds it again.
      await jobs[0]?.remove();
      expect((await desk.collect(app, [request])).size).toBe(0);
      expect((await queue.getJobs(['waiting'])).map((j) => j.id)).toEqual([id]);
      // A stored result is read back, and nothing more is asked for.
      await store.write(id, ok);
      await (await queue.getJob(id))?.remove();
      expect([...(await desk.collect(app, [request]))]).toEqual([['-/errors', ok]]);
      expect(await queue.getJobs(['waiting'])).toEqual([]);
      expect(await client.ttl(`${cfg.prefix}:measured:${id}`)).toBeGreaterThan(3000);
    } finally {
      await queue.close();
    }
  });
});
