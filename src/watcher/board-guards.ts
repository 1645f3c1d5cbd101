/**
 * Checks Bull Board makes on every request before authentication, from the request line and headers alone:
 * - a request that may change something (any method but GET, HEAD and OPTIONS) must come from the board's own
 *   origin: its `Origin` (or, without one, its `Referer`) names the host the request was sent to. A page of
 *   another site cannot make a logged-in browser retry or remove jobs (cross-site request forgery).
 * - a board served without credentials (on loopback only) answers only requests addressed to a loopback
 *   name: a page of another site whose name was made to resolve to 127.0.0.1 (DNS rebinding) reaches it
 *   with its own name in `Host`, and is refused.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The shortest token or password the board accepts, in bytes. */
export const MIN_SECRET_BYTES = 32;

export interface Refusal {
  status: 403;
  message: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The names of loopback; any port (`kubectl port-forward` may pick another local port than the pod's). */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function header(headers: IncomingHttpHeaders, name: 'host' | 'origin' | 'referer'): string | undefined {
  const value = headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `host[:port]` as the URL parser writes it for `protocol` (lower case, default port dropped); undefined if unreadable. */
function normalHost(host: string, protocol: string): string | undefined {
  try {
    const u = new URL(`${protocol}//${host}`);
    return u.username || u.password || u.pathname !== '/' ? undefined : u.host;
  } catch {
    return undefined;
  }
}

/** True when the request names a loopback host (`localhost`, `127.0.0.1` or `[::1]`, with any port). */
export function loopbackHost(headers: IncomingHttpHeaders): boolean {
  const host = header(headers, 'host');
  const hostname = host === undefined ? undefined : normalHost(host, 'http:')?.replace(/:\d+$/, '');
  return hostname !== undefined && LOOPBACK_NAMES.has(hostname);
}

/** True when `Origin` (else `Referer`) has the same host and port as the `Host` the request was sent to. */
export function sameOrigin(headers: IncomingHttpHeaders): boolean {
  const host = header(headers, 'host');
  const source = header(headers, 'origin') ?? header(headers, 'referer');
  if (host === undefined || source === undefined || source === 'null') return false;
  let from: URL;
  try {
    from = new URL(source);
  } catch {
    return false;
  }
  if (from.protocol !== 'http:' && from.protocol !== 'https:') return false;
  const expected = normalHost(host, from.protocol);
  return expected !== undefined && from.host === expected;
}

/** Why a request is refused before authentication, or undefined when it may go on. */
export function guardRequest(method: string | undefined, headers: IncomingHttpHeaders, opts: { loopbackOnly: boolean }): Refusal | undefined {
  if (opts.loopbackOnly && !loopbackHost(headers)) {
    return { status: 403, message: 'forbidden: this board answers only requests to localhost, 127.0.0.1 or [::1]\n' };
  }
  if (!SAFE_METHODS.has((method ?? 'GET').toUpperCase()) && !sameOrigin(headers)) {
    return { status: 403, message: 'forbidden: a request that changes something must come from the board itself (Origin)\n' };
  }
  return undefined;
}
