/** The scheduler with the disk guard: readings taken before pulls, a full filesystem deferring them, status saying why. */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { ImageFsMonitor } from '../../../src/daemon/image-fs.ts';
import { ImageScheduler } from '../../../src/daemon/scheduler.ts';
import { FakeRuntime } from './fake-runtime.ts';

const log = pino({ level: 'silent' });
const IMG = 'registry.example.com/team/a:1';
const MOUNT = '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs';

/** A runtime that also answers ImageFsInfo, counting the calls. */
class DiskRuntime extends FakeRuntime {
  fsCalls = 0;
  imageFs(): Promise<{ mountpoint: string; usedBytes: number | undefined }[]> {
    this.fsCalls++;
    return Promise.resolve([{ mountpoint: MOUNT, usedBytes: 1_000 }]);
  }
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

function start(disk: { available: number }): { s: ImageScheduler; rt: DiskRuntime; statfsPaths: string[] } {
  const rt = new DiskRuntime();
  const statfsPaths: string[] = [];
  const monitor = new ImageFsMonitor({
    runtime: rt,
    log,
    statfs: (path) => {
      statfsPaths.push(path);
      return Promise.resolve({ capacityBytes: 100, availableBytes: disk.available });
    },
  });
  const s = new ImageScheduler({
    runtime: rt,
    credentials: () => Promise.resolve(undefined),
    options: { pullConcurrency: 2, pullTimeoutMs: 10_000, backoffBaseMs: 20, backoffMaxMs: 200, recheckPeriodMs: 60_000 },
    onChange: () => undefined,
    log,
    disk: { monitor, highPercent: 80 },
  });
  const ac = new AbortController();
  const loop = s.run(ac.signal);
  stops.push(async () => {
    await s.stop();
    ac.abort();
    await loop;
  });
  s.setTarget({ uid: 'u', generation: 1 }, [{ image: IMG }], []);
  return { s, rt, statfsPaths };
}

const statusOf = (s: ImageScheduler) => s.snapshot()?.images[0];
const until = <T>(check: () => T | undefined, what: string): Promise<T> => waitFor(check, { timeoutMs: 5_000, intervalMs: 5, what });

describe('ImageScheduler with the disk guard', () => {
  it('reads the image filesystem before the pull, and defers it at or above the threshold: Deferred, the reason, no pull', async () => {
    const { s, rt, statfsPaths } = start({ available: 17 });
    const st = await until(() => (statusOf(s)?.phase === 'Deferred' ? statusOf(s) : undefined), 'Deferred');
    expect(st?.message).toBe(
      `image filesystem ${MOUNT} is 83% used, at or above the 80% threshold (EBB_IMAGE_FS_HIGH_PERCENT): pull deferred until usage falls below it`,
    );
    expect(rt.pulls).toEqual([]);
    expect(rt.fsCalls).toBe(1);
    expect(statfsPaths).toEqual([MOUNT]);
  });

  it('pulls when the reading has room', async () => {
    const { s, rt } = start({ available: 50 });
    await until(() => (statusOf(s)?.phase === 'Pulled' ? true : undefined), 'Pulled');
    expect(rt.pulls.map((p) => p.image)).toEqual([IMG]);
    expect(rt.fsCalls).toBe(1);
  });
});
