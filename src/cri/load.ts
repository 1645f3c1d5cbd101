import path from 'node:path';
import type { MethodDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { ImageServiceMethod, ImageServiceMethods } from './types.ts';

/** Fully qualified name of the CRI image service. */
export const IMAGE_SERVICE_NAME = 'runtime.v1.ImageService';

/** The proto file ships next to this module (the build must copy `*.proto` files along with the JS). */
const PROTO_PATH = path.join(import.meta.dirname, 'image-service.proto');

/**
 * Decoding options shared by client and server; the shapes in types.ts depend on them.
 * `longs: String` keeps uint64 sizes exact on the wire; callers convert to number (sizes fit in 2^53).
 */
const LOADER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

const METHODS: readonly ImageServiceMethod[] = ['ListImages', 'ImageStatus', 'PullImage', 'RemoveImage'];

/** The ImageService definition, typed per method; usable by grpc-js `Client` calls and `Server.addService`. */
export type ImageServiceDefinition = {
  readonly [K in ImageServiceMethod]: MethodDefinition<ImageServiceMethods[K][0], ImageServiceMethods[K][1]>;
};

let cached: ImageServiceDefinition | undefined;

/** Loads (once) and returns the CRI ImageService definition. */
export function loadImageService(): ImageServiceDefinition {
  if (cached) return cached;
  const pkg = loadSync(PROTO_PATH, LOADER_OPTIONS);
  const service = pkg[IMAGE_SERVICE_NAME] as Record<string, MethodDefinition<unknown, unknown> | undefined> | undefined;
  if (!service) throw new Error(`${PROTO_PATH} does not declare ${IMAGE_SERVICE_NAME}`);
  for (const m of METHODS) {
    const def = service[m];
    if (!def || def.requestStream || def.responseStream) throw new Error(`${IMAGE_SERVICE_NAME}.${m} is missing or not unary`);
  }
  cached = service as unknown as ImageServiceDefinition;
  return cached;
}

/**
 * Longest unix socket path, in bytes, that binds and connects everywhere: `sockaddr_un.sun_path` holds
 * 108 bytes on Linux and 104 on macOS/BSD, terminating NUL included, and longer paths fail (or are
 * truncated) at bind/connect time with an unhelpful error. Keep socket paths well under ~100 bytes
 * (short temp dirs, short names).
 */
export const MAX_UNIX_SOCKET_PATH_BYTES = 103;

/** Validates a unix socket path and returns the grpc-js target for it (`unix:///abs/path`). */
export function unixSocketTarget(socketPath: string): string {
  if (socketPath.length === 0) throw new Error('unix socket path is empty');
  const abs = path.resolve(socketPath);
  const bytes = Buffer.byteLength(abs);
  if (bytes > MAX_UNIX_SOCKET_PATH_BYTES) {
    throw new Error(
      `unix socket path ${JSON.stringify(abs)} is ${bytes} bytes; the limit is ${MAX_UNIX_SOCKET_PATH_BYTES} (sun_path): use a shorter directory`,
    );
  }
  return `unix://${abs}`;
}
