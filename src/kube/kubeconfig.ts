import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import {
  KubeConfigError,
  boolField,
  readKubeConfigFiles,
  readReferencedFile,
  resolvePath,
  stringField,
  type Entry,
  type MergedKubeConfig,
} from './kubeconfig-file.ts';
import type { Credentials } from './credentials.ts';
import { pluginCredentials } from './kubeconfig-plugin.ts';

export { KubeConfigError, type KubeConfigErrorCode } from './kubeconfig-file.ts';

/**
 * ebb's own kubeconfig reader: the file(s) named by KUBECONFIG or ~/.kube/config, or the pod's service
 * account. It covers certificates, tokens (also from a file, re-read so rotations are picked up) and basic
 * auth; only users with an `exec` plugin or an `auth-provider` go through @kubernetes/client-node, loaded on
 * first use (kubeconfig-plugin.ts).
 */

/** TLS settings for connections to the apiserver. */
export interface KubeTls {
  ca?: Buffer;
  cert?: Buffer | string;
  key?: Buffer | string;
  servername?: string;
  /** false only with `insecure-skip-tls-verify: true`. */
  rejectUnauthorized?: boolean;
}

export interface KubeConfig {
  /** Where the settings came from, for messages: the file and context, or the service account. */
  readonly source: string;
  readonly server: string;
  readonly tls: KubeTls;
  readonly proxyUrl: string | undefined;
  /** The current context's namespace (kubectl's default namespace for commands); undefined when it names none. */
  readonly namespace?: string | undefined;
  /** Current credentials; called again at every refresh (token files are re-read, exec plugins re-run). */
  credentials(): Promise<Credentials>;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadOptions {
  /** KUBECONFIG and the in-cluster KUBERNETES_SERVICE_HOST/PORT, as the caller's config read them (default: none). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Home directory for `~/.kube/config` (default: the user's). */
  home?: string;
  serviceAccountDir?: string;
  /** The context to use instead of the current-context (kubectl's `--context`); only with a kubeconfig file. */
  context?: string | undefined;
}

/**
 * The kubeconfig at `path` (a single file or a KUBECONFIG-style list), else KUBECONFIG, else
 * `~/.kube/config`, else the in-cluster service account. Throws a KubeConfigError naming what is wrong.
 */
export function loadKubeConfig(path?: string, opts: LoadOptions = {}): KubeConfig {
  const env = opts.env ?? {};
  const list = path || env['KUBECONFIG'];
  if (list) return fromMerged(readKubeConfigFiles(list.split(delimiter).filter((p) => p !== '')), opts.context);
  const home = join(opts.home ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromMerged(readKubeConfigFiles([home]), opts.context);
  if (env['KUBERNETES_SERVICE_HOST'] && env['KUBERNETES_SERVICE_PORT']) {
    if (opts.context !== undefined)
      throw new KubeConfigError(
        'MissingContext',
        `context "${opts.context}" was asked for, but there is no kubeconfig (KUBECONFIG unset, ${home} does not exist)`,
      );
    return inClusterConfig(env, opts.serviceAccountDir);
  }
  throw new KubeConfigError('NotFound', `no kubeconfig: KUBECONFIG is unset, ${home} does not exist, and KUBERNETES_SERVICE_HOST is unset (not in a pod)`);
}

/** The namespace file of the pod's service account, or undefined when there is none (kubectl's in-pod default). */
function serviceAccountNamespace(dir: string): string | undefined {
  try {
    const text = readFileSync(join(dir, 'namespace'), 'utf8').trim();
    return text === '' ? undefined : text;
  } catch {
    return undefined;
  }
}

/**
 * The pod's service account: KUBERNETES_SERVICE_HOST/PORT, its CA, its token (re-read at each refresh), and
 * its namespace (the default namespace of commands run in the pod, as for kubectl).
 */
export function inClusterConfig(env: Readonly<Record<string, string | undefined>>, dir = SERVICE_ACCOUNT_DIR): KubeConfig {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) throw new KubeConfigError('NotFound', 'not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set');
  const ca = readReferencedFile(join(dir, 'ca.crt'), 'the service account CA');
  return {
    source: `in-cluster service account (${dir})`,
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    tls: { ca },
    proxyUrl: undefined,
    namespace: serviceAccountNamespace(dir),
    credentials: tokenFileCredentials(join(dir, 'token'), 'the service account token', {}),
  };
}

/** The context asked for (`--context`), else the current-context. */
function contextOf(m: MergedKubeConfig, context: string | undefined): Entry {
  const where = m.files.join(', ');
  const name = context ?? m.currentContext;
  if (!name) throw new KubeConfigError('NoContext', `${where}: no current-context is set`);
  const ctx = m.contexts.get(name);
  if (!ctx) throw new KubeConfigError('MissingContext', `${where}: ${context === undefined ? 'current-context' : 'context'} "${name}" is not defined`);
  return ctx;
}

function fromMerged(m: MergedKubeConfig, context: string | undefined): KubeConfig {
  const where = m.files.join(', ');
  const ctx = contextOf(m, context);
  const clusterName = stringField(ctx, 'context', 'cluster');
  if (!clusterName) throw new KubeConfigError('Invalid', `context "${ctx.name}" in ${ctx.file} names no cluster`);
  const cluster = m.clusters.get(clusterName);
  if (!cluster) throw new KubeConfigError('MissingCluster', `context "${ctx.name}" names cluster "${clusterName}", which is not defined in ${where}`);
  const userName = stringField(ctx, 'context', 'user');
  const user = userName === undefined ? undefined : m.users.get(userName);
  if (userName !== undefined && !user)
    throw new KubeConfigError('MissingUser', `context "${ctx.name}" names user "${userName}", which is not defined in ${where}`);
  const plugin = user !== undefined && (user.fields['exec'] != null || user.fields['auth-provider'] != null);
  return {
    source: `${ctx.file} (context "${ctx.name}")`,
    server: serverOf(cluster),
    tls: { ...clusterTls(cluster), ...(user && !plugin ? clientCertificate(user) : {}) },
    proxyUrl: proxyOf(cluster),
    namespace: stringField(ctx, 'context', 'namespace'),
    credentials: !user ? () => Promise.resolve({ headers: {} }) : plugin ? pluginCredentials({ context: ctx, cluster, user }) : userCredentials(user),
  };
}

function serverOf(cluster: Entry): string {
  const server = stringField(cluster, 'cluster', 'server');
  if (!server) throw new KubeConfigError('Invalid', `cluster "${cluster.name}" in ${cluster.file} has no server`);
  if (!URL.canParse(server)) throw new KubeConfigError('Invalid', `cluster "${cluster.name}" in ${cluster.file}: server "${server}" is not a URL`);
  return server.replace(/\/+$/, '');
}

function proxyOf(cluster: Entry): string | undefined {
  const proxy = stringField(cluster, 'cluster', 'proxy-url');
  if (proxy !== undefined && !/^https?:\/\//.test(proxy)) {
    throw new KubeConfigError(
      'Invalid',
      `cluster "${cluster.name}" in ${cluster.file}: proxy-url "${proxy}" is not supported (only http:// and https:// proxies)`,
    );
  }
  return proxy;
}

/** `<key>-data` (base64) wins over `<key>` (a file, relative to the kubeconfig that names it). */
function bytes(entry: Entry, kind: string, key: string): Buffer | undefined {
  const data = stringField(entry, kind, `${key}-data`);
  if (data !== undefined) {
    const decoded = Buffer.from(data, 'base64');
    if (decoded.length === 0) throw new KubeConfigError('Invalid', `${kind} "${entry.name}" in ${entry.file}: ${key}-data is not base64`);
    return decoded;
  }
  const file = stringField(entry, kind, key);
  return file === undefined ? undefined : readReferencedFile(resolvePath(entry, file), `${key} of ${kind} "${entry.name}" in ${entry.file}`);
}

function clusterTls(cluster: Entry): KubeTls {
  const tls: KubeTls = {};
  if (boolField(cluster, 'cluster', 'insecure-skip-tls-verify')) tls.rejectUnauthorized = false;
  else {
    const ca = bytes(cluster, 'cluster', 'certificate-authority');
    if (ca) tls.ca = ca;
  }
  const servername = stringField(cluster, 'cluster', 'tls-server-name');
  if (servername) tls.servername = servername;
  return tls;
}

function clientCertificate(user: Entry): Pick<KubeTls, 'cert' | 'key'> {
  const cert = bytes(user, 'user', 'client-certificate');
  const key = bytes(user, 'user', 'client-key');
  if ((cert === undefined) !== (key === undefined)) {
    throw new KubeConfigError('Invalid', `user "${user.name}" in ${user.file}: client-certificate and client-key must be set together`);
  }
  return cert && key ? { cert, key } : {};
}

function userCredentials(user: Entry): () => Promise<Credentials> {
  const base: Record<string, string> = {};
  const as = stringField(user, 'user', 'as');
  if (as) base['impersonate-user'] = as;
  const token = stringField(user, 'user', 'token');
  const tokenFile = stringField(user, 'user', 'tokenFile');
  const username = stringField(user, 'user', 'username');
  if (token) base['authorization'] = `Bearer ${token}`;
  else if (tokenFile) return tokenFileCredentials(resolvePath(user, tokenFile), `tokenFile of user "${user.name}" in ${user.file}`, base);
  else if (username) base['authorization'] = `Basic ${Buffer.from(`${username}:${stringField(user, 'user', 'password') ?? ''}`).toString('base64')}`;
  return () => Promise.resolve({ headers: { ...base } });
}

function readToken(path: string, what: string): string {
  const token = readReferencedFile(path, what).toString('utf8').trim();
  if (token === '') throw new KubeConfigError('Invalid', `${what} (${path}) is empty`);
  return token;
}

/**
 * A bearer token from a file: read now (a missing file fails at start), re-read at every call so a rotated
 * token is used; while the file cannot be read (mid-rotation) the last token stays in use.
 */
function tokenFileCredentials(path: string, what: string, base: Record<string, string>): () => Promise<Credentials> {
  let token = readToken(path, what);
  return () => {
    try {
      token = readToken(path, what);
    } catch {
      // keep the last good token
    }
    return Promise.resolve({ headers: { ...base, authorization: `Bearer ${token}` } });
  };
}

/** TCP keep-alive probes start after 30 s idle, under the common 60 s load-balancer idle timeouts. */
const KEEPALIVE_INITIAL_DELAY_MS = 30_000;
/**
 * An idle connection is kept this long (undici's default is 4 s): a worker between bursts of reconciles reuses
 * its connections instead of paying a TLS handshake for each; under the same load-balancer idle timeouts.
 */
const IDLE_CONNECTION_MS = 30_000;

/**
 * The connection pool for the apiserver: HTTP/1.1 only (every watch on its own connection, as client-go
 * does for HTTP/1.1), keep-alive, the cluster's CA and server name, and the client certificate. The TLS
 * context (CA, certificate, key) is built once for the pool, not once per connection.
 */
export function kubeDispatcher(config: KubeConfig, creds: Credentials): Dispatcher {
  const { ca, cert, key, ...rest } = {
    ...config.tls,
    ...(creds.cert !== undefined && creds.key !== undefined ? { cert: creds.cert, key: creds.key } : {}),
  };
  const connect = {
    ...rest,
    secureContext: createSecureContext({ ca, cert, key }),
    keepAlive: true,
    keepAliveInitialDelay: KEEPALIVE_INITIAL_DELAY_MS,
  };
  if (config.proxyUrl) return new ProxyAgent({ uri: config.proxyUrl, requestTls: connect, allowH2: false });
  return new Agent({ allowH2: false, connect, keepAliveTimeout: IDLE_CONNECTION_MS });
}
