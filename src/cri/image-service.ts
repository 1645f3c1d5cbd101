import type { AuthConfig } from './types.ts';

export type { AuthConfig } from './types.ts';

/**
 * What the node daemon needs from the container runtime, as a narrow interface: CriClient implements it
 * over CRI gRPC, and harness/fakes/image-service.ts in memory. Every method takes an AbortSignal and runs
 * under a deadline, and fails only with a CriError (see errors.ts for the codes).
 */
export interface ImageService {
  /** Name and version of the runtime; also the cheapest "is it up" call. */
  version(opts: CallOptions): Promise<RuntimeVersion>;
  /** The image a reference (tag, digest or image ID) resolves to, or undefined when the runtime lacks it. */
  imageStatus(image: string, opts: CallOptions): Promise<CriImage | undefined>;
  /**
   * Pulls an image and returns its image ref (the image ID). The runtime always asks the registry, also
   * when it has the image already (the transfer is skipped for present content).
   */
  pullImage(image: string, opts: PullOptions): Promise<string>;
  /** The runtime's images; with `image`, only the one that reference resolves to (if any). */
  listImages(opts: ListImagesOptions): Promise<CriImage[]>;
  /** Usage of the filesystem(s) that hold images. */
  imageFsInfo(opts: CallOptions): Promise<ImageFsUsage[]>;
}

export interface CallOptions {
  /** Cancels the call: the promise rejects at once with CriError code `Aborted`. */
  signal: AbortSignal;
  /** Deadline of this call, in ms from now; defaults to the implementation's (every call has one). */
  timeoutMs?: number;
}

export interface PullOptions extends CallOptions {
  /** Registry credential for this pull; sent only to the runtime, never logged nor kept in errors. */
  auth?: AuthConfig;
}

export interface ListImagesOptions extends CallOptions {
  /** Only the image this reference or ID resolves to, as ImageStatus resolves it. */
  image?: string;
}

/** An image as ebb works with it: the CRI `Image` message with its size as a number of bytes. */
export interface CriImage {
  /** Image ID, `sha256:<config digest>`. */
  id: string;
  repoTags: string[];
  /** `repo@sha256:<manifest digest>` references. */
  repoDigests: string[];
  size: number;
  pinned: boolean;
}

export interface RuntimeVersion {
  /** CRI version of the kubelet runtime API the runtime serves. */
  version: string;
  /** e.g. `containerd`. */
  runtimeName: string;
  runtimeVersion: string;
  /** e.g. `v1`. */
  runtimeApiVersion: string;
}

/** Usage of one image filesystem. */
export interface ImageFsUsage {
  mountpoint: string;
  /** When the runtime measured it, in ms since the epoch. */
  timestampMs: number;
  /** Bytes used by images; undefined when the runtime does not report it. */
  usedBytes: number | undefined;
  inodesUsed: number | undefined;
}
