/**
 * Registry credentials from a docker config (the content of a `kubernetes.io/dockerconfigjson` Secret):
 * which `auths` entry serves an image reference, as the kubelet's credential keyring matches them.
 * Pure; nothing here logs, and error texts never quote a credential.
 */
import type { ImageReference } from '../api/image-ref.ts';
import type { PullAuth } from './runtime.ts';

export interface DockerAuthEntry {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
  registrytoken?: string;
}

/** `auths` keys as written (`host`, `https://host`, `host/v1/`, `*.host`, `host/team`) to their entries. */
export type DockerAuths = Record<string, DockerAuthEntry>;

/** The names Docker Hub goes by in docker configs; image references normalise them to docker.io. */
const DOCKER_HUB = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

interface AuthKey {
  /** Host labels, lowercase; `*` matches exactly one label. */
  labels: string[];
  port: string;
  /** Repository path prefix components (empty: the whole registry). */
  path: string[];
}

/** Parses an `auths` key; undefined when it names no registry. */
export function parseAuthKey(key: string): AuthKey | undefined {
  let rest = key.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = rest.indexOf('/');
  const hostPort = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  rest = slash < 0 ? '' : rest.slice(slash + 1);
  // `/v1/` and `/v2/` are API paths left over from the docker CLI, not repository prefixes.
  const path = rest.split('/').filter((c) => c.length > 0);
  if (path.length > 0 && /^v[12]$/.test(path[0] ?? '')) path.shift();
  const m = /^([^:]+)(?::(\d+))?$/.exec(hostPort);
  if (!m?.[1]) return undefined;
  const host = DOCKER_HUB.has(m[1]) ? 'docker.io' : m[1];
  return { labels: host.split('.'), port: m[2] ?? '', path };
}

function hostMatches(key: AuthKey, host: string, port: string): boolean {
  const labels = host.toLowerCase().split('.');
  if (key.port !== port || key.labels.length !== labels.length) return false;
  return key.labels.every((l, i) => l === '*' || l === labels[i]);
}

function pathMatches(key: AuthKey, repoPath: string): boolean {
  const parts = repoPath.split('/');
  return key.path.every((c, i) => parts[i] === c);
}

/** Higher is more specific: exact hosts beat wildcards, longer path prefixes beat shorter ones. */
function specificity(key: AuthKey): number {
  const wildcards = key.labels.filter((l) => l === '*').length;
  return key.path.length * 1000 + key.labels.length * 10 - wildcards;
}

function decodeAuth(auth: string): { username: string; password: string } | undefined {
  const text = Buffer.from(auth, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon <= 0 ? undefined : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

function toPullAuth(entry: DockerAuthEntry, serverAddress: string): PullAuth {
  const out: PullAuth = { serverAddress };
  const decoded = entry.auth ? decodeAuth(entry.auth) : undefined;
  const username = entry.username || decoded?.username;
  const password = entry.password || decoded?.password;
  if (username) out.username = username;
  if (password) out.password = password;
  if (entry.identitytoken) out.identityToken = entry.identitytoken;
  if (entry.registrytoken) out.registryToken = entry.registrytoken;
  return out;
}

/** The credentials for `ref`'s registry, from the most specific matching key; undefined when none match. */
export function credentialsFor(auths: DockerAuths, ref: ImageReference): PullAuth | undefined {
  const [host = '', port = ''] = ref.domain.split(/:(?=\d+$)/);
  let best: { entry: DockerAuthEntry; score: number } | undefined;
  for (const [raw, entry] of Object.entries(auths)) {
    const key = parseAuthKey(raw);
    if (!key || !hostMatches(key, host, port) || !pathMatches(key, ref.path)) continue;
    const score = specificity(key);
    if (!best || score > best.score) best = { entry, score };
  }
  return best ? toPullAuth(best.entry, ref.domain) : undefined;
}

export type SecretData = { type?: string; data?: Record<string, string> | null };
export type ParsedAuths = { ok: true; auths: DockerAuths } | { ok: false; reason: string };

/**
 * The `auths` of a `kubernetes.io/dockerconfigjson` Secret (or a legacy `kubernetes.io/dockercfg` one). The
 * reason of a failure names the Secret's shape, never its content.
 */
export function authsOfSecret(secret: SecretData): ParsedAuths {
  const legacy = secret.type === 'kubernetes.io/dockercfg';
  if (secret.type !== 'kubernetes.io/dockerconfigjson' && !legacy) {
    return { ok: false, reason: `type is ${JSON.stringify(secret.type ?? '')}, not kubernetes.io/dockerconfigjson` };
  }
  const field = legacy ? '.dockercfg' : '.dockerconfigjson';
  const encoded = secret.data?.[field];
  if (!encoded) return { ok: false, reason: `it has no ${field} key` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    return { ok: false, reason: `its ${field} is not JSON` };
  }
  const auths = legacy ? parsed : (parsed as { auths?: unknown } | null)?.auths;
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths)) return { ok: false, reason: `its ${field} has no auths object` };
  return { ok: true, auths: auths as DockerAuths };
}
