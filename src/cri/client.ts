import { Client, Metadata, credentials } from '@grpc/grpc-js';
import { parseCriEndpoint } from './endpoint.ts';
import { abortedError, criErrorFrom, CriError } from './errors.ts';
import type { CallOptions, CriImage, ImageFsUsage, ImageService, ListImagesOptions, PullOptions, RuntimeVersion } from './image-service.ts';
import { loadCriDefinition, type CriDefinition } from './load.ts';
import type { AuthConfig, CriMethod, CriMethods, FilesystemUsage, Image, UInt64Value, WireInt64 } from './types.ts';

export { CriError, isCriError, type CriErrorCode, type RuntimeErrorCode } from './errors.ts';
export { parseCriEndpoint, unixEndpoint } from './endpoint.ts';
export type * from './image-service.ts';

export interface CriClientOptions {
  /** Deadline of calls other than PullImage when the caller gives none. */
  callTimeoutMs?: number;
  /** Deadline of PullImage calls when the caller gives none. */
  pullTimeoutMs?: number;
}

const DEFAULT_CALL_TIMEOUT_MS = 30_000;
const DEFAULT_PULL_TIMEOUT_MS = 10 * 60_000;
/** The CRI version ebb speaks, sent in VersionRequest. */
const CRI_API_VERSION = 'v1';
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
 * Client of a container runtime's CRI image service (and RuntimeService.Version) over its unix socket:
 * containerd, CRI-O, or a simulated node. The channel connects lazily and reconnects by itself; calls fail
 * fast with code `Unavailable` while the runtime is unreachable, so the caller decides when to retry.
 */
export class CriClient implements ImageService {
  private readonly client: Client;
  private readonly methods: CriDefinition;
  private readonly callTimeoutMs: number;
  private readonly pullTimeoutMs: number;
  private closed = false;

  private constructor(socketPath: string, opts: CriClientOptions) {
    this.methods = loadCriDefinition();
    this.client = new Client(`unix://${socketPath}`, credentials.createInsecure(), CHANNEL_OPTIONS);
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.pullTimeoutMs = opts.pullTimeoutMs ?? DEFAULT_PULL_TIMEOUT_MS;
  }

  /**
   * Creates a client for the runtime at `endpoint`, `unix:///absolute/path.sock`. Does not wait for the
   * runtime (see `ready()`). Throws CriError `InvalidEndpoint` for any other endpoint.
   */
  static connect(endpoint: string, opts: CriClientOptions = {}): CriClient {
    return new CriClient(parseCriEndpoint(endpoint), opts);
  }

  /** Resolves once the runtime accepts connections; rejects with `DeadlineExceeded` or `Aborted`. */
  ready(opts: CallOptions): Promise<void> {
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

  async version(opts: CallOptions): Promise<RuntimeVersion> {
    const res = await this.call('Version', { version: CRI_API_VERSION }, opts, this.callTimeoutMs);
    return {
      version: res.version ?? '',
      runtimeName: res.runtimeName ?? '',
      runtimeVersion: res.runtimeVersion ?? '',
      runtimeApiVersion: res.runtimeApiVersion ?? '',
    };
  }

  async pullImage(image: string, opts: PullOptions): Promise<string> {
    const request = { image: { image, userSpecifiedImage: image }, auth: opts.auth ? withServerUrl(opts.auth) : null };
    const res = await this.call('PullImage', request, opts, this.pullTimeoutMs, secretsOf(opts.auth));
    if (!res.imageRef) throw new CriError('Unknown', 'PullImage', 'CRI PullImage: runtime returned an empty image ref');
    return res.imageRef;
  }

  async imageStatus(image: string, opts: CallOptions): Promise<CriImage | undefined> {
    const res = await this.call('ImageStatus', { image: { image } }, opts, this.callTimeoutMs);
    return res.image ? toCriImage(res.image) : undefined;
  }

  /**
   * With `image`, asks ImageStatus instead of sending ListImagesRequest.filter: containerd 1.6 ignores that
   * filter and lists every image, while ImageStatus resolves the reference as the runtime does for pulls.
   */
  async listImages(opts: ListImagesOptions): Promise<CriImage[]> {
    if (opts.image !== undefined) {
      const found = await this.imageStatus(opts.image, opts);
      return found ? [found] : [];
    }
    const res = await this.call('ListImages', { filter: null }, opts, this.callTimeoutMs);
    return (res.images ?? []).map(toCriImage);
  }

  async imageFsInfo(opts: CallOptions): Promise<ImageFsUsage[]> {
    const res = await this.call('ImageFsInfo', {}, opts, this.callTimeoutMs);
    return (res.imageFilesystems ?? []).map(toImageFsUsage);
  }

  /** Removes an image; succeeds when the image is already absent. */
  async removeImage(image: string, opts: CallOptions): Promise<void> {
    await this.call('RemoveImage', { image: { image } }, opts, this.callTimeoutMs);
  }

  /** Closes the channel; later calls fail with `Unavailable`, in-flight ones with `Cancelled`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }

  private call<K extends CriMethod>(
    method: K,
    request: CriMethods[K][1],
    opts: CallOptions,
    defaultTimeoutMs: number,
    secrets: readonly string[] = [],
  ): Promise<CriMethods[K][2]> {
    const { signal } = opts;
    if (this.closed) return Promise.reject(closedError(method));
    if (signal.aborted) return Promise.reject(abortedError(method));
    const def = this.methods[method];
    const deadline = Date.now() + (opts.timeoutMs ?? defaultTimeoutMs);
    return new Promise((resolve, reject) => {
      let settled = false;
      const call = this.client.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, request, new Metadata(), { deadline }, (err, res) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        if (err) reject(criErrorFrom(err, method, secrets));
        else if (res === undefined) reject(new CriError('Unknown', method, `CRI ${method}: empty response`));
        else resolve(res);
      });
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

/** The values of a credential that must never appear in an error (everything but the user and server). */
function secretsOf(auth: AuthConfig | undefined): string[] {
  if (!auth) return [];
  const basic = auth.username && auth.password ? Buffer.from(`${auth.username}:${auth.password}`).toString('base64') : '';
  return [auth.password, auth.auth, auth.identityToken, auth.registryToken, basic].filter((s): s is string => !!s);
}

/**
 * containerd (1.6) parses `serverAddress` as a URL and compares its host with the image's registry, so a
 * bare `host:port`, as docker config keys are usually written, fails the pull: it gets an `https://` prefix.
 */
function withServerUrl(auth: AuthConfig): AuthConfig {
  const address = auth.serverAddress;
  if (!address || /^[a-z][a-z0-9+.-]*:\/\//i.test(address)) return auth;
  return { ...auth, serverAddress: `https://${address}` };
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

function toImageFsUsage(fs: FilesystemUsage): ImageFsUsage {
  return {
    mountpoint: fs.fsId?.mountpoint ?? '',
    timestampMs: Number(BigInt(fs.timestamp ?? 0) / 1_000_000n),
    usedBytes: optionalUint64(fs.usedBytes),
    inodesUsed: optionalUint64(fs.inodesUsed),
  };
}

function optionalUint64(v: UInt64Value | null | undefined): number | undefined {
  const value: WireInt64 | undefined = v?.value;
  return value === undefined ? undefined : Number(value);
}
