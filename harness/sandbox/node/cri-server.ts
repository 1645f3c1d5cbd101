import { lstat, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Server, ServerCredentials, status, type handleUnaryCall } from '@grpc/grpc-js';
import { AbortedError } from '../../../src/common/wait.ts';
import { createLogger, type Logger } from '../../../src/common/log.ts';
import { formatImageReference, parseImageReference } from '../../../src/api/image-ref.ts';
import { loadImageService, loadRuntimeService, unixSocketTarget } from '../../../src/cri/load.ts';
import type { Image, ImageServiceMethod, ImageServiceMethods, VersionRequest, VersionResponse } from '../../../src/cri/types.ts';
import { PullError, type ImageStore, type StoredImage } from './image-store.ts';
import { errorMessage } from '../../../src/common/errors.ts';

export interface ImageServiceOptions {
  /**
   * Absolute path of the unix socket to listen on. Unix socket paths must stay under ~100 bytes
   * (`sun_path` is 108 bytes on Linux, 104 on macOS); a longer path is rejected with a clear error
   * instead of failing obscurely at bind time. A stale socket file left by a previous run is removed.
   */
  socketPath: string;
  store: ImageStore;
  log?: Logger;
}

export interface ImageServiceHandle {
  /** Stops serving: in-flight pulls end with UNAVAILABLE, the socket file is removed. */
  close(): Promise<void>;
}

/** How long close() lets in-flight calls drain before it cuts the connections. */
const SHUTDOWN_GRACE_MS = 2_000;

/**
 * Serves the CRI `runtime.v1.ImageService` of one simulated node on a unix socket, backed by the node's
 * image store, behaving like containerd's CRI plugin: PullImage always pulls (the store skips the transfer
 * when the content is present) and answers the image ID; ImageStatus of an absent image is an empty
 * response; RemoveImage is idempotent; an invalid reference is INVALID_ARGUMENT; a registry failure is
 * UNKNOWN with containerd's "failed to pull and unpack image" message.
 */
export async function serveImageService(opts: ImageServiceOptions): Promise<ImageServiceHandle> {
  const target = unixSocketTarget(opts.socketPath);
  const socketPath = path.resolve(opts.socketPath);
  const log = opts.log ?? createLogger('cri-server', 'silent');
  await mkdir(path.dirname(socketPath), { recursive: true });
  await removeStaleSocket(socketPath);

  // Pulls run under the server's lifetime, not the caller's call: a client that cancels stops waiting,
  // but the pull goes on (another client, or the kubelet, may share it) until it ends or the server closes.
  const lifetime = new AbortController();
  const server = new Server();
  server.addService(loadImageService(), imageServiceHandlers(opts.store, lifetime.signal, log));
  server.addService(loadRuntimeService(), { Version: versionHandler });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(target, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  log.info({ socketPath }, 'CRI image service listening');

  let closing: Promise<void> | undefined;
  return {
    close(): Promise<void> {
      closing ??= (async () => {
        lifetime.abort();
        await shutdown(server);
        await rm(socketPath, { force: true });
        log.info({ socketPath }, 'CRI image service stopped');
      })();
      return closing;
    },
  };
}

type Handlers = { [K in ImageServiceMethod]: handleUnaryCall<ImageServiceMethods[K][0], ImageServiceMethods[K][1]> };

function imageServiceHandlers(store: ImageStore, lifetime: AbortSignal, log: Logger): Handlers {
  return {
    PullImage: unary('PullImage', log, async (req) => {
      const image = req.image?.image ?? '';
      const started = Date.now();
      const pulled = await store.pull(image, lifetime);
      log.info({ image, imageRef: pulled.id, durationMs: Date.now() - started }, 'image pulled');
      return { imageRef: pulled.id };
    }),
    ImageStatus: unary('ImageStatus', log, (req) => {
      const found = lookup(store, req.image?.image);
      return Promise.resolve(found ? { image: toWireImage(found), info: {} } : {});
    }),
    ListImages: unary('ListImages', log, (req) => {
      const ref = req.filter?.image?.image;
      const images = ref ? [lookup(store, ref)].filter((i) => i !== undefined) : store.list();
      return Promise.resolve({ images: images.map(toWireImage) });
    }),
    RemoveImage: unary('RemoveImage', log, (req) => {
      const image = req.image?.image;
      if (image && store.remove(image)) log.info({ image }, 'image removed');
      return Promise.resolve({});
    }),
    ImageFsInfo: unary('ImageFsInfo', log, () => {
      const used = store.list().reduce((sum, img) => sum + img.size, 0);
      const usage = { timestamp: String(Date.now() * 1_000_000), fsId: { mountpoint: '/var/lib/containerd' }, usedBytes: { value: used } };
      return Promise.resolve({ imageFilesystems: [usage], containerFilesystems: [] });
    }),
  };
}

/** RuntimeService.Version: the simulated runtime names itself the way a CRI runtime does. */
const versionHandler: handleUnaryCall<VersionRequest, VersionResponse> = (_call, callback) => {
  callback(null, { version: '0.1.0', runtimeName: 'ebb-sandbox', runtimeVersion: '0.1.0', runtimeApiVersion: 'v1' });
};

/** Wraps an async handler: its result is the response, anything it throws becomes a gRPC status. */
function unary<K extends ImageServiceMethod>(
  method: K,
  log: Logger,
  fn: (req: ImageServiceMethods[K][0]) => Promise<ImageServiceMethods[K][1]>,
): handleUnaryCall<ImageServiceMethods[K][0], ImageServiceMethods[K][1]> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => callback(null, res),
        (err: unknown) => {
          const st = statusFor(err, requestedImage(call.request));
          log.warn({ method, code: st.code, reason: st.details }, 'CRI call failed');
          callback(st);
        },
      );
  };
}

/** The gRPC status containerd's CRI plugin would answer for a failure. */
function statusFor(err: unknown, image: string): { code: status; details: string } {
  if (err instanceof PullError && err.reason === 'InvalidImageName') {
    return { code: status.INVALID_ARGUMENT, details: `failed to parse image reference ${JSON.stringify(image)}: ${err.message}` };
  }
  if (err instanceof PullError) {
    const ref = JSON.stringify(normalized(image));
    return { code: status.UNKNOWN, details: `failed to pull and unpack image ${ref}: failed to resolve reference ${ref}: ${err.message}` };
  }
  if (err instanceof AbortedError) return { code: status.UNAVAILABLE, details: 'image service is shutting down' };
  return { code: status.UNKNOWN, details: errorMessage(err) };
}

/** The image a request names (ListImages names none). */
function requestedImage(req: object): string {
  const spec = (req as { image?: { image?: string } | null }).image;
  return spec?.image ?? '';
}

function lookup(store: ImageStore, image: string | undefined): StoredImage | undefined {
  return image ? store.status(image) : undefined;
}

function normalized(image: string): string {
  const parsed = parseImageReference(image);
  return parsed.ok ? formatImageReference(parsed.ref) : image;
}

function toWireImage(img: StoredImage): Image {
  return {
    id: img.id,
    repoTags: img.repoTags,
    repoDigests: img.repoDigests,
    size: img.size,
    spec: { image: img.id },
    pinned: false,
  };
}

/** Removes a socket file left by a previous run; refuses to touch a live socket or a non-socket file. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  const st = await lstat(socketPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!st) return;
  if (!st.isSocket()) throw new Error(`${socketPath} exists and is not a unix socket; refusing to replace it`);
  if (await isListening(socketPath)) throw new Error(`${socketPath} is in use by another server`);
  await rm(socketPath, { force: true });
}

function isListening(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = net.createConnection(socketPath);
    conn.once('connect', () => {
      conn.destroy();
      resolve(true);
    });
    conn.once('error', () => resolve(false));
  });
}

/** Graceful shutdown, cut short after SHUTDOWN_GRACE_MS. */
async function shutdown(server: Server): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceful = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  const cutoff = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, SHUTDOWN_GRACE_MS);
  });
  await Promise.race([graceful, cutoff]);
  clearTimeout(timer);
}
