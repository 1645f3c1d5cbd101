import path from 'node:path';
import { CriError } from './errors.ts';
import { MAX_UNIX_SOCKET_PATH_BYTES } from './load.ts';

const UNIX_SCHEME = 'unix://';

/**
 * Parses a CRI endpoint as the kubelet's `--container-runtime-endpoint` spells it, `unix:///run/containerd/containerd.sock`,
 * and returns the socket path. Only unix sockets with an absolute path are accepted: anything else (tcp://,
 * npipe://, a bare path, a relative path, a path too long for a socket address) throws CriError `InvalidEndpoint`.
 */
export function parseCriEndpoint(endpoint: string): string {
  const shown = JSON.stringify(endpoint);
  if (!endpoint.startsWith(UNIX_SCHEME)) {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(endpoint)?.[1];
    const what = scheme ? `the ${scheme}:// scheme is not supported` : 'it has no unix:// scheme';
    throw invalid(`CRI endpoint ${shown}: ${what}; use unix:///absolute/path/to/runtime.sock`);
  }
  const socketPath = endpoint.slice(UNIX_SCHEME.length);
  if (!socketPath.startsWith('/')) {
    throw invalid(`CRI endpoint ${shown}: the socket path must be absolute (unix:///path, three slashes)`);
  }
  if (socketPath.includes('\0') || socketPath.endsWith('/')) {
    throw invalid(`CRI endpoint ${shown}: not a socket path`);
  }
  const normalized = path.posix.normalize(socketPath);
  const bytes = Buffer.byteLength(normalized);
  if (bytes > MAX_UNIX_SOCKET_PATH_BYTES) {
    throw invalid(`CRI endpoint ${shown}: the socket path is ${bytes} bytes; the limit is ${MAX_UNIX_SOCKET_PATH_BYTES} (sun_path)`);
  }
  return normalized;
}

/** The endpoint of a unix socket path (made absolute), e.g. for a runtime the tests started. */
export function unixEndpoint(socketPath: string): string {
  return `${UNIX_SCHEME}${path.resolve(socketPath)}`;
}

function invalid(message: string): CriError {
  return new CriError('InvalidEndpoint', 'connect', message);
}
