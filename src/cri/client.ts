import { Client, Metadata, credentials } from '@grpc/grpc-js';
import { abortedError, criErrorFrom, CriError } from './errors.ts';
import { loadImageService, unixSocketTarget, type ImageServiceDefinition } from './load.ts';
import type { AuthConfig, CriImage, Image, ImageServiceMethod, ImageServiceMethods } from './types.ts';

export { CriError, isCriError, type CriErrorCode } from './errors.ts';
export type { AuthConfig, CriImage } from './types.ts';

export interface CriClientOptions {
  /** Deadline of ImageStatus, ListImages and RemoveImage calls when the caller gives none. */
  callTimeoutMs?: number;
  /** Deadline of PullImage calls when the caller gives none. */
  pullTimeoutMs?: number;
}

export interface CallOpts {
  /** Cancels the call (the promise rejects with CriError code `Aborted`). */
  signal: AbortSignal;
  /** Deadline of this call; defaults to the client's. */
  timeoutMs?: number;
}

export interface PullOpts extends CallOpts {
  /** Registry credential for this pull; sent only to the runtime, never logged or kept in errors. */
  auth?: AuthConfig;
}

const DEFAULT_CALL_TIMEOUT_MS = 30_000;
const DEFAULT_PULL_TIMEOUT_MS = 10 * 60_000;
/** As the kubelet's CRI client: image lists of busy nodes exceed grpc's 4 MiB default. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/**
 * Reconnecting to a local socket is cheap, so the channel retries quickly after a runtime restart
 * (grpc's default backoff grows to 120 s, during which every call fails fast as Unavailable). Each client
 * has its own subchannels, so a new client never inherits another one's backoff.
 */
const CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 5_000,
  'grpc.use_local_subchannel_pool': 1,
};

/**
 * Client of a container runtime's CRI ImageService over its unix socket (containerd, CRI-O, or a simulated
 * node). The channel connects lazily and reconnects by itself; calls fail fast with code `Unavailable` while
 * the runtime is unreachable, so the caller decides when to retry. Every call takes an AbortSignal and a
 * deadline.
 */
export class CriImageClient {
  private readonly client: Client;
  private readonly service: ImageServiceDefinition;
  private readonly callTimeoutMs: number;
  private readonly pullTimeoutMs: number;
  private closed = false;

  private constructor(target: string, opts: CriClientOptions) {
    this.service = loadImageService();
    this.client = new Client(target, credentials.createInsecure(), CHANNEL_OPTIONS);
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.pullTimeoutMs = opts.pullTimeoutMs ?? DEFAULT_PULL_TIMEOUT_MS;
  }

  /**
   * Creates a client for the runtime listening on `socketPath` (an absolute path, e.g. containerd's
   * socket). Does not wait for the runtime: use `ready()` for that. Throws CriError `InvalidArgument`
   * for a path that cannot be a unix socket address.
   */
  static connect(socketPath: string, opts: CriClientOptions = {}): CriImageClient {
    let target: string;
    try {
      target = unixSocketTarget(socketPath);
    } catch (err) {
      throw new CriError('InvalidArgument', 'connect', err instanceof Error ? err.message : String(err));
    }
    return new CriImageClient(target, opts);
  }

  /** Resolves once the runtime accepts connections; rejects with `DeadlineExceeded` or `Aborted`. */
  ready(opts: CallOpts): Promise<void> {
    if (this.closed) return Promise.reject(closedError('ready'));
    if (opts.signal.aborted) return Promise.reject(abortedError('ready'));
    const deadline = Date.now() + (opts.timeoutMs ?? this.callTimeoutMs);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(abortedError('ready'));
      opts.signal.addEventListener('abort', onAbort, { once: true });
      this.client.waitForReady(deadline, (err) => {
        opts.signal.removeEventListener('abort', onAbort);
        if (err) reject(new CriError('DeadlineExceeded', 'ready', `CRI runtime not ready: ${err.message}`));
        else resolve();
      });
    });
  }

  /** Pulls an image (the runtime always contacts the registry) and returns the image ref (the image ID). */
  async pullImage(image: string, opts: PullOpts): Promise<string> {
    const res = await this.call(
      'PullImage',
      { image: { image, userSpecifiedImage: image }, auth: opts.auth ?? null },
      opts.signal,
      opts.timeoutMs ?? this.pullTimeoutMs,
    );
    if (!res.imageRef) throw new CriError('Unknown', 'PullImage', 'CRI PullImage: runtime returned an empty image ref');
    return res.imageRef;
  }

  /** Returns the image, or undefined when the runtime does not have it. */
  async imageStatus(image: string, opts: CallOpts): Promise<CriImage | undefined> {
    const res = await this.call('ImageStatus', { image: { image } }, opts.signal, opts.timeoutMs ?? this.callTimeoutMs);
    return res.image ? toCriImage(res.image) : undefined;
  }

  /** Lists the runtime's images; with `image`, only the one that reference or ID resolves to (if any). */
  async listImages(opts: CallOpts & { image?: string }): Promise<CriImage[]> {
    const filter = opts.image === undefined ? null : { image: { image: opts.image } };
    const res = await this.call('ListImages', { filter }, opts.signal, opts.timeoutMs ?? this.callTimeoutMs);
    return (res.images ?? []).map(toCriImage);
  }

  /** Removes an image; succeeds when the image is already absent. */
  async removeImage(image: string, opts: CallOpts): Promise<void> {
    await this.call('RemoveImage', { image: { image } }, opts.signal, opts.timeoutMs ?? this.callTimeoutMs);
  }

  /** Closes the channel; later calls fail with `Unavailable`. In-flight calls are cancelled. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }

  private call<K extends ImageServiceMethod>(
    method: K,
    request: ImageServiceMethods[K][0],
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ImageServiceMethods[K][1]> {
    if (this.closed) return Promise.reject(closedError(method));
    if (signal.aborted) return Promise.reject(abortedError(method));
    const def = this.service[method];
    return new Promise((resolve, reject) => {
      let settled = false;
      const call = this.client.makeUnaryRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        request,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err, res) => {
          signal.removeEventListener('abort', onAbort);
          if (settled) return;
          settled = true;
          if (err) reject(criErrorFrom(err, method));
          else if (res === undefined) reject(new CriError('Unknown', method, `CRI ${method}: empty response`));
          else resolve(res);
        },
      );
      // Settle at once on abort: the cancellation's own status arrives later and is ignored.
      function onAbort(): void {
        if (settled) return;
        settled = true;
        call.cancel();
        reject(abortedError(method));
      }
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function closedError(method: string): CriError {
  return new CriError('Unavailable', method, `CRI ${method}: client is closed`);
}

/** Converts the wire `Image` (uint64 size as a decimal string) to ebb's CriImage. */
export function toCriImage(img: Image): CriImage {
  return {
    id: img.id ?? '',
    repoTags: img.repoTags ?? [],
    repoDigests: img.repoDigests ?? [],
    size: Number(img.size ?? 0),
    pinned: img.pinned ?? false,
  };
}
