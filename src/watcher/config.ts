import { HTTP_SETTINGS, KUBE_SETTINGS, LOG_SETTINGS, WATCH_SETTINGS, kubeAccessOf, type KubeAccess } from '../common/process-settings.ts';
import { frozen, parseSettings, table, type Env, type Values } from '../common/settings.ts';
import type { LogLevel } from '../common/log.ts';
import { QUEUE_SETTINGS, queueConfigOf, type QueueConfig } from '../queue/settings.ts';
import { VIEW_SETTINGS } from '../view/settings.ts';
import { VIEW_APP_PODS } from '../view/writer.ts';
import { REDIS_LIVENESS_SETTINGS } from '../queue/redis-settings.ts';
import type { BoardAuth } from './board.ts';
import { SCALER_SETTINGS, scalerTlsOf, type ScalerTlsFiles } from './scaler-settings.ts';
import { MIN_SECRET_BYTES } from './board-guards.ts';
import { boardAccessOf } from './board-kube-auth.ts';

/** The watcher's configuration: parsed and validated once, frozen, passed down. */
export interface WatcherConfig {
  readonly queue: QueueConfig;
  /** Namespaces whose Apps are watched; empty = all namespaces. */
  readonly namespaces: readonly string[];
  /** Where the apiserver is (KUBECONFIG, or the in-cluster service settings), and the deadline of a request. */
  readonly kube: KubeAccess;
  readonly httpAddress: string;
  readonly httpPort: number;
  /** Port of the KEDA external scaler (gRPC); undefined when switched off. */
  readonly scalerPort: number | undefined;
  /** Mutual TLS of the scaler; undefined: plaintext (NetworkPolicies confine it). */
  readonly scalerTls: ScalerTlsFiles | undefined;
  readonly scalerMaxStreams: number;
  /** A watch that delivers nothing (bookmarks included) for this long is re-opened. */
  readonly watchdogMs: number;
  readonly logLevel: LogLevel;
  /** /healthz fails once Redis has been out of reach this long; 0: never. */
  readonly redisUnhealthyAfterMs: number;
  /** Whether the watcher writes the shared view of Apps and their pods (`src/view/`). */
  readonly view: boolean;
  /** The most pods one App's view holds; past it that App reads fresh. */
  readonly viewAppPods: number;
  /**
   * One reconcile worker in a thread of the watcher's process, configured from `env` (the worker's settings),
   * its old space `heapMb`; undefined: none (separate `ebb worker` processes only).
   */
  readonly workerThread: { readonly env: Env; readonly heapMb: number; readonly kubeconfig: string | undefined } | undefined;
  /** Bull Board; undefined when disabled. */
  readonly board: { readonly basePath: string; readonly readOnly: boolean; readonly auth: BoardAuth } | undefined;
  /** Why the board is off although it was not switched off (shown once in the log). */
  readonly boardNote: string | undefined;
}

/** Everything `ebb watcher` reads. */
export const WATCHER_SETTINGS = table(
  {
    ...KUBE_SETTINGS.entries,
    ...LOG_SETTINGS.entries,
    ...HTTP_SETTINGS.entries,
    ...WATCH_SETTINGS.entries,
    ...QUEUE_SETTINGS.entries,
    ...REDIS_LIVENESS_SETTINGS.entries,
    ...VIEW_SETTINGS.entries,
    viewAppPods: {
      name: 'EBB_VIEW_APP_PODS',
      type: 'int',
      default: VIEW_APP_PODS,
      min: 1,
      max: 1_000_000,
      doc: "with `EBB_VIEW`: the most pods one App's view holds in Redis (about 2 KiB each; a pod deleted keeps its place until its App goes); an App that selects more reads fresh from the apiserver until the watcher relists its pods",
    },
    namespaces: {
      name: 'EBB_NAMESPACES',
      type: 'list',
      item: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
      itemFormat: 'a namespace name',
      defaultDoc: 'all',
      doc: 'comma-separated namespaces whose Apps are watched',
    },
    scaler: { name: 'EBB_SCALER', type: 'switch', default: true, doc: 'serve the KEDA external-push scaler (gRPC); `false` also saves loading gRPC' },
    scalerPort: {
      name: 'EBB_SCALER_PORT',
      type: 'port',
      default: 9090,
      hint: 'to switch the scaler off, set EBB_SCALER=false',
      doc: 'port of the KEDA scaler, on `EBB_HTTP_ADDRESS` (`0`: any free port)',
    },
    ...SCALER_SETTINGS.entries,
    workerThread: {
      name: 'EBB_WATCHER_WORKER_THREAD',
      type: 'switch',
      default: false,
      doc: "run one reconcile worker in a thread of the watcher's process (the worker's settings, e.g. `EBB_WORKER_CONCURRENCY`, read from the watcher's environment; it reconciles as the watcher's identity unless `EBB_WATCHER_WORKER_THREAD_KUBECONFIG` gives it the worker's), its heap bounded by `EBB_WATCHER_WORKER_THREAD_HEAP`: a thread that ends (past its heap, or an error) is started again with back-off while the watcher goes on; `/readyz` fails while it is not running, `/metrics` carries its metrics labelled `thread=\"watcher\"`; the KEDA scaler then leaves the ScaledObject's `threadBacklog` (default its `jobsPerWorker`) to the thread before it asks for worker processes; `false`: `ebb worker` processes only",
    },
    workerThreadHeap: {
      name: 'EBB_WATCHER_WORKER_THREAD_HEAP',
      type: 'int',
      default: 256,
      min: 32,
      max: 65_536,
      doc: "with `EBB_WATCHER_WORKER_THREAD`: the thread's V8 old space in MiB (`resourceLimits`; the worker process's `--max-old-space-size`); a reconcile that needs more ends the thread alone, not the watcher",
    },
    workerThreadKubeconfig: {
      name: 'EBB_WATCHER_WORKER_THREAD_KUBECONFIG',
      type: 'string',
      doc: "with `EBB_WATCHER_WORKER_THREAD`: a kubeconfig file the thread's requests use (its `KUBECONFIG`), so that the thread reconciles as the worker's ServiceAccount and the watcher's own identity keeps its rights (deploy/components/watcher-worker-thread mounts one); unset: the thread uses the watcher's",
    },
    board: { name: 'EBB_BOARD', type: 'switch', default: true, doc: 'serve Bull Board (without credentials, only on a loopback `EBB_HTTP_ADDRESS`)' },
    boardPath: {
      name: 'EBB_BOARD_PATH',
      type: 'string',
      default: '/board',
      pattern: /^\/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$/,
      format: 'be a URL path like /board',
      doc: 'URL path of Bull Board; the rollouts page is beside it (`/board` → `/rollouts`, `/ebb/board` → `/ebb/rollouts`)',
    },
    boardReadOnly: {
      name: 'EBB_BOARD_READ_ONLY',
      type: 'switch',
      default: true,
      doc: '`false` allows retrying and removing jobs from Bull Board (with `EBB_BOARD_KUBE_AUTH_RESOURCE`: only to users who may `update` that resource)',
    },
    boardToken: {
      name: 'EBB_BOARD_TOKEN',
      type: 'string',
      secret: true,
      doc: `Bull Board credential: a Bearer token (or the password of HTTP Basic with any user), at least ${MIN_SECRET_BYTES} bytes (\`openssl rand -base64 32\`)`,
    },
    boardUser: { name: 'EBB_BOARD_USER', type: 'string', doc: 'Bull Board HTTP Basic user (with `EBB_BOARD_PASSWORD`)' },
    boardPassword: {
      name: 'EBB_BOARD_PASSWORD',
      type: 'string',
      secret: true,
      doc: `Bull Board HTTP Basic password (with \`EBB_BOARD_USER\`), at least ${MIN_SECRET_BYTES} bytes`,
    },
    boardKubeAuthResource: {
      name: 'EBB_BOARD_KUBE_AUTH_RESOURCE',
      type: 'string',
      pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
      format: 'be resource.group, like apps.apps.ebb.dev, or a core resource, like services',
      defaultDoc: 'unset: no Kubernetes authentication',
      doc: 'Bull Board opens to a bearer token (or the HTTP Basic password, any user) minted for the audience `ebb-board` (`kubectl create token <account> --audience ebb-board`) of a user the apiserver allows to `get` this resource, read-only unless it may also `update` it; with no `EBB_BOARD_KUBE_AUTH_NAMESPACE`, a user who holds it only by RoleBindings sees only the jobs of those namespaces where it may also `list` Apps, and changes none (TokenReview, then SubjectAccessReviews, at most 1 a second per client address and 10 a second overall, answers cached 10s; the watcher needs the `system:auth-delegator` ClusterRole); instead of `EBB_BOARD_TOKEN` and `EBB_BOARD_USER`',
    },
    boardKubeAuthNamespace: {
      name: 'EBB_BOARD_KUBE_AUTH_NAMESPACE',
      type: 'string',
      pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
      format: 'be a namespace name',
      defaultDoc: 'cluster-wide',
      doc: 'the namespace of the resource of `EBB_BOARD_KUBE_AUTH_RESOURCE`',
    },
    boardKubeAuthName: {
      name: 'EBB_BOARD_KUBE_AUTH_NAME',
      type: 'string',
      pattern: /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
      format: 'be an object name',
      defaultDoc: 'any object',
      doc: 'one object of the resource of `EBB_BOARD_KUBE_AUTH_RESOURCE`',
    },
  },
  [
    ...QUEUE_SETTINGS.checks,
    ...SCALER_SETTINGS.checks,
    {
      uses: ['boardUser', 'boardPassword'],
      problems: (v) => ((v.boardUser === undefined) !== (v.boardPassword === undefined) ? ['EBB_BOARD_USER and EBB_BOARD_PASSWORD must be set together'] : []),
    },
    { uses: ['boardToken', 'boardPassword'], problems: (v) => shortSecrets(v) },
    {
      uses: ['boardToken', 'boardUser', 'boardKubeAuthResource', 'boardKubeAuthNamespace', 'boardKubeAuthName'],
      problems: (v, isSet) => kubeAuthProblems(v, isSet),
    },
  ],
);

type WatcherValues = Values<typeof WATCHER_SETTINGS.entries>;

/** A token or password shorter than MIN_SECRET_BYTES (the message never shows it). */
function shortSecrets(v: { readonly boardToken: string | undefined; readonly boardPassword: string | undefined }): string[] {
  const short = (s: string | undefined): boolean => s !== undefined && Buffer.byteLength(s) < MIN_SECRET_BYTES;
  return [
    ...(short(v.boardToken) ? [`EBB_BOARD_TOKEN: must be at least ${MIN_SECRET_BYTES} bytes (generate one with openssl rand -base64 32)`] : []),
    ...(short(v.boardPassword) ? [`EBB_BOARD_PASSWORD: must be at least ${MIN_SECRET_BYTES} bytes (generate one with openssl rand -base64 32)`] : []),
  ];
}

interface KubeAuthValues {
  readonly boardToken: string | undefined;
  readonly boardUser: string | undefined;
  readonly boardKubeAuthResource: string | undefined;
}

function kubeAuthProblems(v: KubeAuthValues, isSet: (k: 'boardKubeAuthNamespace' | 'boardKubeAuthName') => boolean): string[] {
  if (v.boardKubeAuthResource === undefined) {
    return (['boardKubeAuthNamespace', 'boardKubeAuthName'] as const)
      .filter(isSet)
      .map((k) => `${k === 'boardKubeAuthName' ? 'EBB_BOARD_KUBE_AUTH_NAME' : 'EBB_BOARD_KUBE_AUTH_NAMESPACE'} is set but EBB_BOARD_KUBE_AUTH_RESOURCE is not`);
  }
  return v.boardToken !== undefined || v.boardUser !== undefined
    ? ['EBB_BOARD_KUBE_AUTH_RESOURCE is set together with EBB_BOARD_TOKEN or EBB_BOARD_USER: choose one way to authenticate']
    : [];
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

function boardAuth(v: WatcherValues): BoardAuth {
  if (v.boardKubeAuthResource !== undefined) {
    return { kind: 'kubernetes', access: boardAccessOf(v.boardKubeAuthResource, v.boardKubeAuthNamespace, v.boardKubeAuthName) };
  }
  if (v.boardToken !== undefined) return { kind: 'token', token: v.boardToken };
  if (v.boardUser !== undefined && v.boardPassword !== undefined) return { kind: 'basic', user: v.boardUser, password: v.boardPassword };
  return { kind: 'none' };
}

/**
 * Bull Board is on by default. Without credentials it is served only on a loopback address; elsewhere it
 * stays off (with a note) rather than exposing the queues unauthenticated.
 */
function board(v: WatcherValues): Pick<WatcherConfig, 'board' | 'boardNote'> {
  if (!v.board) return { board: undefined, boardNote: undefined };
  const auth = boardAuth(v);
  if (auth.kind === 'none' && !LOOPBACK.test(v.httpAddress)) {
    return {
      board: undefined,
      boardNote: `Bull Board is off: set EBB_BOARD_TOKEN (or EBB_BOARD_USER/EBB_BOARD_PASSWORD, or EBB_BOARD_KUBE_AUTH_RESOURCE) to serve it on ${v.httpAddress}`,
    };
  }
  return { board: { basePath: v.boardPath, readOnly: v.boardReadOnly, auth }, boardNote: undefined };
}

/** The worker thread's environment: the watcher's, with the thread's own kubeconfig when one is given. */
const threadEnv = (env: Env, kubeconfig: string | undefined): Env => (kubeconfig === undefined ? { ...env } : { ...env, KUBECONFIG: kubeconfig });

/** Pure parser; `loadWatcherConfig` feeds it process.env. Throws one ConfigError listing every problem. */
export function parseWatcherConfig(env: Env): WatcherConfig {
  const v = parseSettings(WATCHER_SETTINGS, env);
  return frozen({
    ...board(v),
    queue: queueConfigOf(v),
    namespaces: v.namespaces,
    kube: kubeAccessOf(v),
    httpAddress: v.httpAddress,
    httpPort: v.httpPort,
    scalerPort: v.scaler ? v.scalerPort : undefined,
    scalerTls: scalerTlsOf(v),
    scalerMaxStreams: v.scalerMaxStreams,
    watchdogMs: v.watchdog,
    logLevel: v.logLevel,
    redisUnhealthyAfterMs: v.redisUnhealthyAfter,
    view: v.view,
    viewAppPods: v.viewAppPods,
    workerThread: v.workerThread
      ? { env: threadEnv(env, v.workerThreadKubeconfig), heapMb: v.workerThreadHeap, kubeconfig: v.workerThreadKubeconfig }
      : undefined,
  });
}

export function loadWatcherConfig(): WatcherConfig {
  return parseWatcherConfig(process.env);
}
