import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { ImageListEntry, ImageStatus } from '../../../src/api/image-list.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { daemonMetrics } from '../../../src/daemon/metrics.ts';
import { RuntimeError, type PullAuth } from '../../../src/daemon/runtime.ts';
import { ImageScheduler, type SchedulerDeps } from '../../../src/daemon/scheduler.ts';
import { PullSecretError } from '../../../src/daemon/secrets.ts';
import { FakeRuntime } from './fake-runtime.ts';

const log = pino({ level: 'silent' });
const img = (n: string): string => `registry.example.com/team/${n}:1`;

interface Harness {
  s: ImageScheduler;
  rt: FakeRuntime;
  metrics: ReturnType<typeof daemonMetrics>;
  status(image: string): ImageStatus | undefined;
  set(entries: ImageListEntry[], uid?: string): void;
  until<T>(check: () => T | undefined, what: string): Promise<T>;
  stop(): Promise<void>;
}

const running: Harness[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((h) => h.stop()));
});

function start(over: Partial<SchedulerDeps['options']> = {}, deps: Partial<Pick<SchedulerDeps, 'credentials'>> = {}): Harness {
  const rt = new FakeRuntime();
  const metrics = daemonMetrics();
  const s = new ImageScheduler({
    runtime: rt,
    credentials: deps.credentials ?? (() => Promise.resolve(undefined)),
    options: { pullConcurrency: 2, pullTimeoutMs: 10_000, backoffBaseMs: 20, backoffMaxMs: 200, recheckPeriodMs: 60_000, ...over },
    onChange: () => undefined,
    metrics,
    log,
    random: () => 1,
  });
  const ac = new AbortController();
  const loop = s.run(ac.signal);
  let stopped: Promise<void> | undefined;
  const h: Harness = {
    s,
    rt,
    metrics,
    status: (image) => s.snapshot()?.images.find((i) => i.image === image),
    set: (entries, uid = 'uid-1') => s.setTarget({ uid, generation: 1 }, entries, []),
    until: (check, what) => waitFor(check, { timeoutMs: 5_000, intervalMs: 5, what }),
    stop: () =>
      (stopped ??= (async () => {
        await s.stop();
        ac.abort();
        await loop;
      })()),
  };
  running.push(h);
  return h;
}

const pulled = (h: Harness, image: string) => () => (h.status(image)?.phase === 'Pulled' ? h.status(image) : undefined);

describe('ImageScheduler', () => {
  it('looks an image up first, pulls it when absent, and reports Pulled with imageRef and lastPullTime', async () => {
    const h = start();
    h.set([{ image: img('a') }]);
    const st = await h.until(pulled(h, img('a')), 'a pulled');
    expect(st).toMatchObject({ imageRef: expect.stringMatching(/^sha256:/) as unknown, attempts: 1, lastPullTime: expect.any(String) as unknown });
    expect(h.rt.statusCalls).toEqual([img('a')]);
    expect(h.rt.pulls.map((p) => p.image)).toEqual([img('a')]);
  });

  it('does not pull an image the runtime already holds', async () => {
    const h = start();
    h.rt.images.set(img('a'), 'sha256:present');
    h.set([{ image: img('a') }]);
    expect(await h.until(pulled(h, img('a')), 'a pulled')).toMatchObject({ imageRef: 'sha256:present' });
    expect(h.rt.pulls).toHaveLength(0);
  });

  it('runs at most pullConcurrency pulls at once', async () => {
    const h = start({ pullConcurrency: 2 });
    h.rt.hold = true;
    h.set(['a', 'b', 'c', 'd', 'e'].map((n) => ({ image: img(n) })));
    await h.until(() => (h.rt.running === 2 ? true : undefined), 'two pulls running');
    await sleep(50);
    expect(h.rt.running).toBe(2);
    expect((await h.metrics.pullsInFlight.get()).values[0]?.value).toBe(2);
    h.rt.release();
    await h.until(() => (h.s.snapshot()?.images.every((i) => i.phase === 'Pulled') ? true : undefined), 'all pulled');
    expect(h.rt.maxRunning).toBe(2);
    expect(h.rt.pulls).toHaveLength(5);
  });

  it('never pulls one image twice at once: a pull requested during a pull runs after it', async () => {
    const h = start();
    h.rt.hold = true;
    h.set([{ image: img('a') }]);
    await h.until(() => (h.rt.running === 1 ? true : undefined), 'pull running');
    h.set([{ image: img('a'), pullRequestedAt: new Date().toISOString() }]);
    await sleep(50);
    expect(h.rt.pulls).toHaveLength(1);
    h.rt.release();
    await h.until(() => (h.rt.pulls.length === 2 && h.status(img('a'))?.observedPullRequestedAt ? true : undefined), 'second pull answered the request');
    expect(h.rt.maxSameImage).toBe(1);
  });

  it('an alwaysPull re-pull (a pull request) pulls although the image is present', async () => {
    const h = start();
    h.rt.images.set(img('a'), 'sha256:old');
    h.set([{ image: img('a'), alwaysPull: true }]);
    await h.until(pulled(h, img('a')), 'reported from the lookup');
    expect(h.rt.pulls).toHaveLength(0);
    const requested = new Date().toISOString();
    h.set([{ image: img('a'), alwaysPull: true, pullRequestedAt: requested }]);
    await h.until(() => (h.status(img('a'))?.observedPullRequestedAt === requested ? true : undefined), 'request answered');
    expect(h.rt.pulls).toHaveLength(1);
  });

  it('backs off after failures, counts attempts, and succeeds when the registry recovers', async () => {
    const h = start({ backoffBaseMs: 40, backoffMaxMs: 1_000 });
    h.rt.failPull.set(1, new RuntimeError('NotFound', 'manifest unknown'));
    h.rt.failPull.set(2, new RuntimeError('Auth', 'unauthorized'));
    const t0 = Date.now();
    h.set([{ image: img('a') }]);
    const failed = await h.until(() => (h.status(img('a'))?.phase === 'Failed' ? h.status(img('a')) : undefined), 'first failure');
    expect(failed).toMatchObject({ attempts: 1, message: 'NotFound: manifest unknown' });
    const st = await h.until(pulled(h, img('a')), 'pulled at last');
    expect(st.attempts).toBe(3);
    expect(st.message).toBeUndefined();
    // random() = 1: the delays are 40 ms, then 80 ms.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110);
    expect(h.rt.pulls).toHaveLength(3);
    const results = (await h.metrics.pulls.get()).values.map((v) => [v.labels['result'], v.value]);
    expect(Object.fromEntries(results)).toEqual({ NotFound: 1, Auth: 1, success: 1 });
  });

  it('a pull that outlives its deadline fails as Timeout', async () => {
    const h = start({ pullTimeoutMs: 30 });
    h.rt.hold = true;
    h.set([{ image: img('a') }]);
    const st = await h.until(() => (h.status(img('a'))?.phase === 'Failed' ? h.status(img('a')) : undefined), 'timed out');
    expect(st.message).toMatch(/deadline/);
    expect(h.rt.pulls[0]!.signal.aborted).toBe(true);
  });

  it('cancels the pull of an entry removed from the spec, and forgets it', async () => {
    const h = start();
    h.rt.hold = true;
    h.set([{ image: img('a') }, { image: img('b') }]);
    await h.until(() => (h.rt.running === 2 ? true : undefined), 'pulls running');
    h.set([{ image: img('b') }]);
    await h.until(() => (h.rt.pulls[0]!.signal.aborted ? true : undefined), 'pull of a cancelled');
    expect(h.s.snapshot()?.images.map((i) => i.image)).toEqual([img('b')]);
    h.rt.release();
    await h.until(pulled(h, img('b')), 'b pulled');
    expect(h.rt.pulls[1]!.signal.aborted).toBe(false);
  });

  it('a deleted list cancels everything and drops its state; a re-created one starts afresh', async () => {
    const h = start();
    h.rt.hold = true;
    h.set([{ image: img('a') }]);
    await h.until(() => (h.rt.running === 1 ? true : undefined), 'pull running');
    h.s.clear();
    expect(h.s.snapshot()).toBeUndefined();
    await h.until(() => (h.rt.pulls[0]!.signal.aborted ? true : undefined), 'cancelled');
    h.rt.release();
    h.set([{ image: img('a') }], 'uid-2');
    expect(await h.until(pulled(h, img('a')), 'pulled again')).toMatchObject({ attempts: 1 });
    expect(h.s.snapshot()?.uid).toBe('uid-2');
  });

  it('stop() cancels in-flight pulls, marks them Pending, and starts nothing more', async () => {
    const h = start({ pullConcurrency: 1 });
    h.rt.hold = true;
    h.set([{ image: img('a') }, { image: img('b') }]);
    await h.until(() => (h.rt.running === 1 ? true : undefined), 'pull running');
    await h.stop();
    expect(h.rt.pulls).toHaveLength(1);
    expect(h.rt.pulls[0]!.signal.aborted).toBe(true);
    expect(h.status(img('a'))).toMatchObject({ phase: 'Pending', message: expect.stringMatching(/interrupted/) as unknown });
  });

  it('pulls again an image it pulled that went away (image garbage collection)', async () => {
    const h = start({ recheckPeriodMs: 40 });
    h.set([{ image: img('a') }]);
    await h.until(pulled(h, img('a')), 'pulled');
    h.rt.images.delete(img('a'));
    await h.until(() => (h.rt.pulls.length === 2 && h.status(img('a'))?.phase === 'Pulled' ? true : undefined), 'pulled again');
  });

  it('never sends an invalid reference to the runtime', async () => {
    const h = start();
    const bad = `registry.example.com/${'x'.repeat(300)}:1`;
    h.set([{ image: bad }, { image: img('a') }]);
    await h.until(pulled(h, img('a')), 'a pulled');
    expect(h.status(bad)).toMatchObject({ phase: 'Failed', message: expect.stringContaining('invalid image reference') as unknown });
    expect([...h.rt.statusCalls, ...h.rt.pulls.map((p) => p.image)]).not.toContain(bad);
  });

  it('passes the pull secret credentials to the runtime; an unusable secret fails the image without a pull', async () => {
    const auth: PullAuth = { username: 'u', password: 'p', serverAddress: 'registry.example.com' };
    const h = start(
      {},
      {
        credentials: (entry) =>
          entry.pullSecret?.name === 'good' ? Promise.resolve(auth) : Promise.reject(new PullSecretError('NotFound', { namespace: 'ns', name: 'missing' })),
      },
    );
    h.set([
      { image: img('a'), pullSecret: { namespace: 'ns', name: 'good' } },
      { image: img('b'), pullSecret: { namespace: 'ns', name: 'missing' } },
    ]);
    await h.until(pulled(h, img('a')), 'a pulled');
    const b = await h.until(() => (h.status(img('b'))?.phase === 'Failed' ? h.status(img('b')) : undefined), 'b failed');
    expect(b.message).toBe('pull secret ns/missing is unusable');
    expect(h.rt.pulls.map((p) => [p.image, p.auth])).toEqual([[img('a'), auth]]);
  });

  it('a runtime that does not answer lookups backs off and says so in the message', async () => {
    const h = start();
    h.rt.statusError = new RuntimeError('Unavailable', 'connection refused');
    h.set([{ image: img('a') }]);
    await h.until(() => (h.status(img('a'))?.message?.includes('container runtime') ? true : undefined), 'message');
    expect(h.status(img('a'))?.phase).toBe('Pending');
    h.rt.statusError = undefined;
    await h.until(pulled(h, img('a')), 'pulled once the runtime answers');
  });
});
