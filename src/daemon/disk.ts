/**
 * Disk safety of the daemon's pulls (pure): whether the image filesystem has room for one more pre-pull.
 *
 * The measure is the kubelet's own for image garbage collection: the filesystem holding the runtime's images
 * (the mountpoint CRI ImageFsInfo names), used percent = 100 - available × 100 / capacity, rounded as the
 * kubelet rounds it (down, on the available share). At or above the threshold (set below the kubelet's
 * imageGCHighThresholdPercent) no pull starts: a pre-pull must never be what makes the kubelet collect images a
 * node runs, nor what it collects next. An image the kubelet's collection removed comes back only when its
 * last known size fits below the threshold too, so a pull does not undo the collection that just made room.
 */

/** A reading of the image filesystem: its usage, or why it could not be read. */
export type DiskReading =
  | {
      /** When it was taken (ms since the epoch). */
      at: number;
      mountpoint: string;
      capacityBytes: number;
      availableBytes: number;
      /** Bytes the runtime's images use on it (CRI ImageFsInfo), when the runtime says. */
      imageBytes: number | undefined;
      failure?: undefined;
    }
  | { at: number; failure: string };

/** The setting the threshold comes from, named in status messages so that an operator knows what to change. */
export const HIGH_PERCENT_SETTING = 'EBB_IMAGE_FS_HIGH_PERCENT';

/** Used percent as the kubelet computes it; `extraBytes` more used (a pull to come). */
export function usedPercent(capacityBytes: number, availableBytes: number, extraBytes = 0): number {
  if (capacityBytes <= 0) return 100;
  const available = Math.max(0, availableBytes - extraBytes);
  return 100 - Math.floor((available * 100) / capacityBytes);
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** Bytes for people: `1.5 GiB`, `120 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)} GiB`;
  return `${Math.max(1, Math.round(bytes / MIB))} MiB`;
}

/**
 * Why a pull must wait for room on the image filesystem, or undefined when it may start. `returningBytes`: the
 * last known size of an image that was on the node and went away (its pull brings that much back); 0 for any
 * other pull. A reading that failed defers nothing: the kubelet's own collection still guards the node, and a
 * daemon that cannot see the filesystem (not mounted into its pod) keeps pre-pulling.
 */
export function pullDeferral(reading: DiskReading, highPercent: number, returningBytes = 0): string | undefined {
  if (reading.failure !== undefined) return undefined;
  const { mountpoint, capacityBytes, availableBytes } = reading;
  const now = usedPercent(capacityBytes, availableBytes);
  const where = `image filesystem ${mountpoint}`;
  const threshold = `the ${highPercent}% threshold (${HIGH_PERCENT_SETTING})`;
  if (now >= highPercent) return `${where} is ${now}% used, at or above ${threshold}: pull deferred until usage falls below it`;
  if (returningBytes <= 0) return undefined;
  const after = usedPercent(capacityBytes, availableBytes, returningBytes);
  if (after < highPercent) return undefined;
  return `${where} is ${now}% used; pulling this image back (${formatBytes(returningBytes)}, removed by image garbage collection) would bring it to ${after}%, at or above ${threshold}: pull deferred`;
}
