/**
 * The hosts each namespace's checks may call (`EBB_CHECK_ALLOWED_HOSTS`): entries `NAMESPACE/HOST[:PORT]`.
 * NAMESPACE is a namespace name or `*` (every namespace). HOST is a name (`prometheus.monitoring.svc`), a
 * wildcard for the names under a domain (`*.team-a.svc`: `x.team-a.svc`, not `team-a.svc`), an IP address
 * (IPv6 in brackets) or `*` (any host). Without PORT any port matches. No entry: no check may call anything.
 * An allowed host is still subject to the address rules (`addresses.ts`).
 */

export interface AllowEntry {
  readonly namespace: string;
  readonly host: string;
  readonly port: number | undefined;
}

const NAMESPACE = String.raw`\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?`;
const HOST = String.raw`\*|(\*\.)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?|\[[0-9a-f:.]+\]`;
/** 1..65535. */
const PORT = String.raw`6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}`;
/** One entry, as the setting's item pattern. */
export const ALLOW_ENTRY = new RegExp(`^(${NAMESPACE})/(${HOST})(:(${PORT}))?$`, 'i');

const ENTRY = new RegExp(`^(${NAMESPACE})/(${HOST})(?::(${PORT}))?$`, 'i');

/** The entry `text` stands for, or undefined when it is not one. */
export function parseAllowEntry(text: string): AllowEntry | undefined {
  const m = ENTRY.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  const [, namespace = '', , host = '', , , port] = m;
  return { namespace, host, port: port === undefined ? undefined : Number(port) };
}

/** Entries of the setting's items (items that are not entries are left out: the setting refuses them). */
export const allowEntries = (items: readonly string[]): AllowEntry[] => items.flatMap((i) => parseAllowEntry(i) ?? []);

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

/** The URL's host is allowed for checks of `namespace`. */
export function hostAllowed(entries: readonly AllowEntry[], namespace: string, url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return entries.some((e) => (e.namespace === '*' || e.namespace === namespace) && (e.port === undefined || e.port === port) && hostMatches(e.host, host));
}
