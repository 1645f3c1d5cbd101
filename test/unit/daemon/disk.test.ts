import { describe, expect, it } from 'vitest';
import { pullDeferral, usedPercent, type DiskReading } from '../../../src/daemon/disk.ts';
import { planImages, type Plan, type PlanInput } from '../../../src/daemon/plan.ts';
import { markChecked, markDeferred, newMemory, type ImageMemory } from '../../../src/daemon/state.ts';
import { ImageFsMonitor } from '../../../src/daemon/image-fs.ts';
import { RuntimeError } from '../../../src/daemon/runtime.ts';
import { pino } from 'pino';

const silentLogger = () => pino({ level: 'silent' });

const NOW = Date.parse('2025-06-01T12:00:00Z');
const RECHECK = 300_000;
const GIB = 1024 ** 3;
const IMG = 'registry.example.com/team/app:v1';
const MOUNT = '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs';
/** 100 GiB, `usedPct` percent used. */
const reading = (usedPct: number, at = NOW): DiskReading => ({
  at,
  mountpoint: MOUNT,
  capacityBytes: 100 * GIB,
  availableBytes: (100 - usedPct) * GIB,
  imageBytes: 10 * GIB,
});

describe('usedPercent: as the kubelet measures it', () => {
  it.each([
    [100, 17, 83],
    // The available share is rounded down: 19.5% available is 81% used (100 - 19).
    [1000, 195, 81],
    [100, 0, 100],
    [100, 100, 0],
  ])('capacity %d, available %d: %d%% used', (capacity, available, used) => {
    expect(usedPercent(capacity, available)).toBe(used);
  });

  it('counts bytes to come as used, never below nothing available', () => {
    expect(usedPercent(100, 20, 5)).toBe(85);
    expect(usedPercent(100, 20, 50)).toBe(100);
  });

  it('an empty capacity reads as full', () => {
    expect(usedPercent(0, 0)).toBe(100);
  });
});

describe('pullDeferral', () => {
  it('defers every pull at or above the threshold, saying how full, which threshold and its setting', () => {
    expect(pullDeferral(reading(83), 80)).toBe(
      `image filesystem ${MOUNT} is 83% used, at or above the 80% threshold (EBB_IMAGE_FS_HIGH_PERCENT): pull deferred until usage falls below it`,
    );
    expect(pullDeferral(reading(80), 80)).toMatch(/is 80% used, at or above the 80% threshold/);
  });

  it('lets a pull start below the threshold', () => {
    expect(pullDeferral(reading(79), 80)).toBeUndefined();
  });

  it('an image collected by the kubelet comes back only if its size fits below the threshold', () => {
    expect(pullDeferral(reading(75), 80, 2 * GIB)).toBeUndefined();
    expect(pullDeferral(reading(75), 80, 6 * GIB)).toBe(
      `image filesystem ${MOUNT} is 75% used; pulling this image back (6.0 GiB, removed by image garbage collection) would bring it to 81%, at or above the 80% threshold (EBB_IMAGE_FS_HIGH_PERCENT): pull deferred`,
    );
  });

  it('a failed reading defers nothing', () => {
    expect(pullDeferral({ at: NOW, failure: 'statfs: ENOENT' }, 1, 100 * GIB)).toBeUndefined();
  });
});

function mem(patch: Partial<ImageMemory> = {}): ImageMemory {
  return Object.assign(newMemory({ image: IMG }, undefined), { present: false, checkedAt: NOW - 1_000 }, patch);
}

function plan(m: ImageMemory, disk: PlanInput['disk']): Plan {
  return planImages({
    entries: [m.entry],
    memory: new Map([[IMG, m]]),
    busy: new Set(),
    pullSlots: 2,
    checkSlots: 4,
    now: NOW,
    recheckPeriodMs: RECHECK,
    disk,
  });
}

const disk = (r: DiskReading | undefined, extra: Partial<NonNullable<PlanInput['disk']>> = {}): PlanInput['disk'] => ({
  reading: r,
  busy: false,
  highPercent: 80,
  freshMs: 10_000,
  ...extra,
});

describe('planImages with the disk guard', () => {
  it('without a reading, reads the image filesystem before any pull', () => {
    expect(plan(mem(), disk(undefined)).actions).toEqual([{ kind: 'readDisk' }]);
  });

  it('with an old reading, reads again first', () => {
    expect(plan(mem(), disk(reading(10, NOW - 10_000))).actions).toEqual([{ kind: 'readDisk' }]);
  });

  it('does not ask for a second reading while one is being taken', () => {
    expect(plan(mem(), disk(undefined, { busy: true })).actions).toEqual([]);
  });

  it('with a fresh reading below the threshold, pulls', () => {
    expect(plan(mem(), disk(reading(50, NOW - 1_000))).actions).toMatchObject([{ kind: 'pull', image: IMG, reason: 'absent' }]);
  });

  it('with a fresh reading at or above the threshold, defers with the reason', () => {
    expect(plan(mem(), disk(reading(83, NOW - 1_000))).actions).toEqual([
      { kind: 'defer', image: IMG, message: expect.stringContaining('is 83% used, at or above the 80% threshold') as unknown },
    ]);
  });

  it('defers the return of an image the kubelet collected when its size would cross the threshold', () => {
    const gone = mem({ sizeBytes: 6 * GIB });
    expect(plan(gone, disk(reading(75, NOW))).actions).toMatchObject([
      { kind: 'defer', message: expect.stringContaining('pulling this image back') as unknown },
    ]);
    // A new image of unknown size is pulled at the same usage.
    expect(plan(mem(), disk(reading(75, NOW))).actions).toMatchObject([{ kind: 'pull' }]);
  });

  it('a deferred image waits for its retry time (the next re-check), then reads the disk again', () => {
    const deferred = mem({ retryAt: NOW + RECHECK, status: { image: IMG, phase: 'Deferred', message: 'x' } });
    expect(plan(deferred, disk(reading(90, NOW)))).toEqual({ actions: [], wakeAt: NOW + RECHECK });
    deferred.retryAt = NOW;
    expect(plan(deferred, disk(reading(90, NOW - RECHECK))).actions).toEqual([{ kind: 'readDisk' }]);
  });

  it('after a deferral, the image is looked up again at the next re-check: the kubelet may have pulled it meanwhile', () => {
    const m = mem();
    markDeferred(m, 'full', NOW + RECHECK);
    expect(m.status).toMatchObject({ phase: 'Deferred', message: 'full' });
    expect(plan(m, disk(reading(90, NOW)))).toEqual({ actions: [], wakeAt: NOW + RECHECK });
    m.retryAt = NOW;
    expect(plan(m, disk(reading(90, NOW - RECHECK))).actions).toEqual([{ kind: 'check', image: IMG }]);
    // Found present: reported Pulled, no pull, no reading. Still absent: the reason stays until the pull is decided.
    markChecked(m, { present: true, imageRef: 'sha256:aa', sizeBytes: 5 }, NOW);
    expect(plan(m, disk(undefined)).actions).toEqual([{ kind: 'present', image: IMG }]);
    const gone = mem();
    markDeferred(gone, 'full', NOW);
    markChecked(gone, { present: false }, NOW);
    expect(gone.status).toMatchObject({ phase: 'Deferred', message: 'full' });
  });

  it('lookups need no reading', () => {
    expect(plan(mem({ checkedAt: undefined, present: undefined }), disk(undefined)).actions).toEqual([{ kind: 'check', image: IMG }]);
  });

  it('a failed reading holds no pull back', () => {
    expect(plan(mem(), disk({ at: NOW, failure: 'statfs: ENOENT' })).actions).toMatchObject([{ kind: 'pull' }]);
  });
});

describe('ImageFsMonitor', () => {
  const runtime = (fs: () => Promise<{ mountpoint: string; usedBytes: number | undefined }[]>) => ({
    version: () => Promise.resolve({ runtimeName: 'x', runtimeVersion: '1' }),
    imageStatus: () => Promise.resolve({ present: false }),
    pull: () => Promise.resolve({ imageRef: 'x' }),
    imageFs: fs,
  });
  const signal = AbortSignal.timeout(10_000);

  it('reads the mountpoint from the runtime and its capacity from statfs', async () => {
    const paths: string[] = [];
    const set: number[] = [];
    const monitor = new ImageFsMonitor({
      runtime: runtime(() => Promise.resolve([{ mountpoint: MOUNT, usedBytes: 123 }])),
      log: silentLogger(),
      gauge: { set: (v: number) => void set.push(v) },
      statfs: (path) => {
        paths.push(path);
        return Promise.resolve({ capacityBytes: 100, availableBytes: 17 });
      },
      now: () => NOW,
    });
    expect(await monitor.refresh(signal)).toEqual({ at: NOW, mountpoint: MOUNT, capacityBytes: 100, availableBytes: 17, imageBytes: 123 });
    expect(paths).toEqual([MOUNT]);
    expect(set).toEqual([83]);
    expect(monitor.busy).toBe(false);
  });

  it.each<[string, Parameters<typeof runtime>[0], RegExp]>([
    ['the runtime fails', () => Promise.reject(new RuntimeError('Unavailable', 'down')), /^CRI ImageFsInfo: down$/],
    ['the runtime names no filesystem', () => Promise.resolve([]), /names no image filesystem/],
  ])('keeps a failed reading when %s', async (_name, fs, message) => {
    const monitor = new ImageFsMonitor({ runtime: runtime(fs), log: silentLogger(), now: () => NOW });
    const r = await monitor.refresh(signal);
    expect(r?.failure).toMatch(message);
    expect(r?.at).toBe(NOW);
  });

  it('keeps a failed reading when statfs fails, naming the path', async () => {
    const monitor = new ImageFsMonitor({
      runtime: runtime(() => Promise.resolve([{ mountpoint: '/nowhere', usedBytes: undefined }])),
      log: silentLogger(),
      statfs: () => Promise.reject(new Error('ENOENT: no such file or directory')),
    });
    expect((await monitor.refresh(signal))?.failure).toBe("statfs /nowhere: ENOENT: no such file or directory (is it mounted into the daemon's pod?)");
  });
});
