import path from 'node:path';
import type { MethodDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { CriMethod, CriMethods, ImageServiceMethod, ImageServiceMethods, VersionRequest, VersionResponse } from './types.ts';

/** Fully qualified names of the CRI services ebb uses. */
export const IMAGE_SERVICE_NAME = 'runtime.v1.ImageService';
export const RUNTIME_SERVICE_NAME = 'runtime.v1.RuntimeService';

/** The proto files ship next to this module (the build copies `*.proto` files along with the JS). */
export const PROTO_FILES: readonly string[] = ['image-service.proto', 'runtime-service.proto'].map((f) => path.join(import.meta.dirname, f));

/**
 * Decoding options shared by client and server; the shapes in types.ts depend on them.
 * `longs: String` keeps uint64 sizes exact on the wire; callers convert to number (sizes fit in 2^53).
 */
const LOADER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

/** Each method ebb calls, with the service that declares it. */
const METHODS: { readonly [K in CriMethod]: string } = {
  ListImages: IMAGE_SERVICE_NAME,
  ImageStatus: IMAGE_SERVICE_NAME,
  PullImage: IMAGE_SERVICE_NAME,
  RemoveImage: IMAGE_SERVICE_NAME,
  ImageFsInfo: IMAGE_SERVICE_NAME,
  Version: RUNTIME_SERVICE_NAME,
};

/** Every method ebb calls, typed per method (method names are unique across the two services). */
export type CriDefinition = {
  readonly [K in CriMethod]: MethodDefinition<CriMethods[K][1], CriMethods[K][2]>;
};

/**
 * The ImageService methods a simulated node serves, typed per method; usable by `Server.addService` (the
 * service's other methods, e.g. ImageFsInfo, then answer UNIMPLEMENTED).
 */
export type ImageServiceDefinition = {
  readonly [K in ImageServiceMethod]: MethodDefinition<ImageServiceMethods[K][0], ImageServiceMethods[K][1]>;
};

type ServiceDefinition = Record<string, MethodDefinition<unknown, unknown> | undefined>;

let services: ReadonlyMap<string, ServiceDefinition> | undefined;
let cachedCri: CriDefinition | undefined;

/** Loads the proto files once and checks that every method ebb calls is declared and unary. */
function loadServices(): ReadonlyMap<string, ServiceDefinition> {
  if (services) return services;
  const pkg = loadSync([...PROTO_FILES], LOADER_OPTIONS);
  const found = new Map<string, ServiceDefinition>();
  for (const name of [IMAGE_SERVICE_NAME, RUNTIME_SERVICE_NAME]) {
    const service = pkg[name] as ServiceDefinition | undefined;
    if (!service) throw new Error(`the CRI proto files do not declare ${name}`);
    found.set(name, service);
  }
  for (const [method, name] of Object.entries(METHODS)) {
    const def = found.get(name)?.[method];
    if (!def || def.requestStream || def.responseStream) throw new Error(`${name}.${method} is missing or not unary`);
  }
  services = found;
  return found;
}

/** The definitions of every CRI method ebb's client calls. */
export function loadCriDefinition(): CriDefinition {
  if (cachedCri) return cachedCri;
  const loaded = loadServices();
  const entries = Object.entries(METHODS).map(([method, name]) => [method, loaded.get(name)?.[method]]);
  cachedCri = Object.fromEntries(entries) as CriDefinition;
  return cachedCri;
}

/** The CRI ImageService definition (all its declared methods), as a server adds it. */
export function loadImageService(): ImageServiceDefinition {
  return loadServices().get(IMAGE_SERVICE_NAME) as unknown as ImageServiceDefinition;
}

/** The CRI RuntimeService definition as declared (ebb declares only Version), as a server adds it. */
export function loadRuntimeService(): { readonly Version: MethodDefinition<VersionRequest, VersionResponse> } {
  return loadServices().get(RUNTIME_SERVICE_NAME) as unknown as { readonly Version: MethodDefinition<VersionRequest, VersionResponse> };
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
