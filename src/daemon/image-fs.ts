/**
 * Reads the image filesystem's usage: the mountpoint from the runtime (CRI ImageFsInfo), then the capacity
 * and the available bytes of the filesystem mounted there (statfs). The daemon's pod must see that path (the
 * DaemonSet mounts the runtime's root read-only at the same path); when it cannot, the reading is a failure,
 * which holds no pull back (`disk.ts`).
 */
import { statfs as nodeStatfs } from 'node:fs/promises';
import { errorMessage } from '../common/errors.ts';
import { repeatGate, type Logger } from '../common/log.ts';
import { usedPercent, type DiskReading } from './disk.ts';
import type { ImageRuntime } from './runtime.ts';

/** The capacity and the bytes available to unprivileged writers of the filesystem mounted at `path`. */
export type Statfs = (path: string) => Promise<{ capacityBytes: number; availableBytes: number }>;

export const hostStatfs: Statfs = async (path) => {
  const s = await nodeStatfs(path);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
};

/** Why the image filesystem could not be read; its message goes to the log. */
export class ImageFsError extends Error {
  override readonly name = 'ImageFsError';
  readonly code: 'NoImageFs' | 'Runtime' | 'Statfs';
  constructor(code: ImageFsError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** One reading; throws ImageFsError. */
async function read(runtime: ImageRuntime, statfs: Statfs, now: () => number, signal: AbortSignal): Promise<DiskReading & { failure?: undefined }> {
  if (!runtime.imageFs) throw new ImageFsError('NoImageFs', 'the container runtime does not report its image filesystem');
  let mountpoint: string | undefined;
  let imageBytes: number | undefined;
  try {
    const [first] = await runtime.imageFs(signal);
    mountpoint = first?.mountpoint;
    imageBytes = first?.usedBytes;
  } catch (err) {
    throw new ImageFsError('Runtime', `CRI ImageFsInfo: ${errorMessage(err)}`);
  }
  if (!mountpoint) throw new ImageFsError('NoImageFs', 'CRI ImageFsInfo names no image filesystem');
  try {
    const { capacityBytes, availableBytes } = await statfs(mountpoint);
    return { at: now(), mountpoint, capacityBytes, availableBytes, imageBytes };
  } catch (err) {
    throw new ImageFsError('Statfs', `statfs ${mountpoint}: ${errorMessage(err)} (is it mounted into the daemon's pod?)`);
  }
}

export interface ImageFsMonitorDeps {
  runtime: ImageRuntime;
  log: Logger;
  /** Set to the used percent of each reading. */
  gauge?: { set(value: number): void } | undefined;
  statfs?: Statfs | undefined;
  now?: () => number;
}

/**
 * The last reading, and a refresh that runs one reading at a time. A failed reading is kept as such (with its
 * time), so the planner knows it was tried, and logged (a repeated failure once).
 */
export class ImageFsMonitor {
  reading: DiskReading | undefined;
  busy = false;
  private readonly deps: ImageFsMonitorDeps;
  private readonly gate = repeatGate();

  constructor(deps: ImageFsMonitorDeps) {
    this.deps = deps;
  }

  /** Takes a reading (unless one is being taken); never throws. */
  async refresh(signal: AbortSignal): Promise<DiskReading | undefined> {
    if (this.busy) return this.reading;
    this.busy = true;
    const { runtime, log, gauge, statfs = hostStatfs, now = Date.now } = this.deps;
    try {
      const reading = await read(runtime, statfs, now, signal);
      const before = this.reading;
      this.reading = reading;
      gauge?.set(usedPercent(reading.capacityBytes, reading.availableBytes));
      // Said once when the first reading succeeds (or one succeeds after failures), not on every reading.
      if (before === undefined || 'failure' in before) {
        log.info({ mountpoint: reading.mountpoint }, 'image filesystem usage read');
        this.gate.reset();
      }
    } catch (err) {
      if (signal.aborted) return this.reading;
      const failure = errorMessage(err);
      this.reading = { at: now(), failure };
      const held = this.gate.pass(failure);
      if (held !== undefined)
        log.warn({ err: failure, ...(held > 0 ? { suppressed: held } : {}) }, 'image filesystem usage unknown; pulls are not held back for disk');
    } finally {
      this.busy = false;
    }
    return this.reading;
  }
}
