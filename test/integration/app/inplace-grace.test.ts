/**
 * gracePeriodSeconds on the sandbox with the real watcher and worker: the readiness gate is False at least the
 * grace period before the image changes, and meanwhile no worker is busy — the reconcile that started the
 * update returned a wait, a delayed job waited on the timers queue, and when it fired a short reconcile
 * patched the image. Proven from the worker's debug log and the timers queue itself.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Reason } from '../../../src/api/keys.ts';
import { createTimersQueue, parseQueueConfig, redisConnection, type TimerData } from '../../../src/queue/index.ts';
import { GRACE_PERIOD_WAIT, readState } from '../../../src/workers/inplace/index.ts';
import { createApp, image, isSettled, patchApp, settled, template, uniqueName, until, useController } from './harness.ts';
import { gateOf, imagesOf, isAnnotated, recordPods } from './pod-history.ts';

interface LogRecord {
  time: number;
  msg: string;
  name?: string;
  result?: string;
  ms?: number;
  wait?: { reason: string; afterMs: number };
}

const records: LogRecord[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line.trim()) records.push(JSON.parse(line) as LogRecord);
    done();
  },
});
const ctl = useController('app-ipgrace', { log: pino({ level: 'debug', base: { component: 'it-grace' } }, sink) });

let closeTimers: (() => Promise<void>) | undefined;
afterAll(async () => closeTimers?.());

describe('in-place grace period', () => {
  it('gracePeriodSeconds 5: gate False ≥ 5 s before the image changes; the job returned and a timer fired', async () => {
    const connection = redisConnection(ctl.env['EBB_REDIS_URL'] ?? '', { forWorker: false, name: 'it-grace-timers', log: pino({ level: 'silent' }) });
    const timers = createTimersQueue(connection, parseQueueConfig(ctl.env));
    closeTimers = async () => {
      await timers.close();
      await connection.quit();
    };
    const name = uniqueName('grace');
    const spec = {
      replicas: 1,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } },
    };
    await createApp(ctl.ns, name, spec as Partial<AppSpec>);
    await settled(ctl.ns, name);
    const history = await recordPods(ctl.ns, name);
    const delayed: TimerData[] = [];
    const watching = { on: true };
    const poll = (async () => {
      while (watching.on) {
        for (const job of await timers.getDelayed()) if (job.data.key.name === name) delayed.push(job.data);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    await until(ctl.ns, name, (s) => s.app.metadata.generation === 2 && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True'), {
      timeoutMs: 60_000,
    });
    watching.on = false;
    await poll;
    await history.stop();

    // The gate went False, and the image changed ≥ 5 s later (as seen on the watch).
    const out = history.seen.find((s) => gateOf(s.pod)?.status === 'False')!;
    const patched = history.seen.find((s) => imagesOf(s.pod)[0] === image('v2'))!;
    expect(gateOf(out.pod)?.reason).toBe(Reason.startInPlaceUpdate);
    expect(patched.at - out.at).toBeGreaterThanOrEqual(5000);
    expect(history.seen.filter((s) => s.at < patched.at && gateOf(s.pod)?.status === 'False').every((s) => imagesOf(s.pod)[0] === image('v1'))).toBe(true);

    // A timer for the end of the grace period waited on the timers queue.
    const startedAt = Date.parse(readState(out.pod)!.startedAt);
    const grace = delayed.filter((t) => t.reason === GRACE_PERIOD_WAIT);
    expect(grace.length).toBeGreaterThan(0);
    expect(grace.every((t) => Math.abs(t.dueAt - (startedAt + 5000)) < 1000)).toBe(true);
    expect((await timers.getDelayed()).filter((j) => j.data.key.name === name && j.data.reason === GRACE_PERIOD_WAIT)).toHaveLength(0);

    // The worker: every reconcile of this App in the grace period returned a wait and took little time; the one
    // after it started when the timer was due.
    const mine = records.filter((r) => r.name === name && r.time >= out.at - 1000 && r.time <= patched.at);
    const finished = mine.filter((r) => r.msg === 'reconcile finished');
    const inGrace = finished.filter((r) => r.time > out.at + 100 && r.time < startedAt + 5000);
    expect(inGrace.every((r) => r.result === 'wait' && r.wait?.reason === GRACE_PERIOD_WAIT)).toBe(true);
    // A worker that slept through the grace period would spend it (5 s) in one job; these bounds leave room for
    // a loaded machine and still tell the two apart.
    expect(finished.every((r) => (r.ms ?? 0) < 2500)).toBe(true);
    expect(finished.reduce((sum, r) => sum + (r.ms ?? 0), 0)).toBeLessThan(5000);
    const woken = mine.filter((r) => r.msg === 'reconcile started' && r.time >= startedAt + 5000);
    expect(woken.length).toBeGreaterThan(0);
    expect(mine.some((r) => r.msg === 'reconcile failed')).toBe(false);
    await settled(ctl.ns, name);
  });
});
