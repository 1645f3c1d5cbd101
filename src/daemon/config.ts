import type { LogLevel } from '../common/log.ts';
import {
  HTTP_SETTINGS,
  KUBE_SETTINGS,
  LOG_SETTINGS,
  PULL_SECRET_NAMESPACE_SETTING,
  WATCH_SETTINGS,
  kubeAccessOf,
  type KubeAccess,
} from '../common/process-settings.ts';
import { formatDuration } from '../common/duration.ts';
import { frozen, parseSettings, table, type Env } from '../common/settings.ts';

/** The node daemon's configuration: parsed and validated once, frozen, passed down. */
export interface DaemonConfig {
  /** The node this daemon runs on: it keeps the images of the ImageList of this name. */
  readonly nodeName: string;
  /** The container runtime's CRI endpoint as configured (`unix:///…`). */
  readonly criEndpoint: string;
  /** The unix socket path of `criEndpoint`, for socket-level checks. */
  readonly criSocketPath: string;
  /** Image pulls run at once. */
  readonly pullConcurrency: number;
  /** Deadline of one image pull. */
  readonly pullTimeoutMs: number;
  /** Retry delay of a failed pull: starts at `baseMs`, doubles per failure, capped at `capMs`. */
  readonly pullBackoff: { readonly baseMs: number; readonly capMs: number };
  /** How often every image of the list is checked against the runtime again. */
  readonly recheckPeriodMs: number;
  /** At or above this used percent of the image filesystem, no pull starts. */
  readonly imageFsHighPercent: number;
  /** Status changes within this long are written to the ImageList in one update. */
  readonly statusFlushMs: number;
  /** A watch that delivers nothing (bookmarks included) for this long is re-opened. */
  readonly watchdogMs: number;
  /** Where the worker copies pull secrets, the only namespace whose Secrets the daemon reads; unset: none. */
  readonly pullSecretNamespace: string | undefined;
  /** Where the apiserver is (KUBECONFIG, or the in-cluster service settings), and the deadline of a request. */
  readonly kube: KubeAccess;
  readonly httpAddress: string;
  readonly httpPort: number;
  readonly logLevel: LogLevel;
}

/** A node name: a DNS-1123 subdomain. */
const NODE_NAME_PATTERN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function unixSocketProblem(text: string): string | undefined {
  const u = new URL(text);
  if (u.host !== '' || !u.pathname.startsWith('/') || u.pathname === '/')
    return 'must be unix:// followed by an absolute socket path, like unix:///run/containerd/containerd.sock';
  if (u.search || u.hash) return 'query parameters and fragments are not supported';
  return undefined;
}

/** Everything `ebb daemon` reads. */
export const DAEMON_SETTINGS = table(
  {
    ...KUBE_SETTINGS.entries,
    ...LOG_SETTINGS.entries,
    ...HTTP_SETTINGS.entries,
    ...WATCH_SETTINGS.entries,
    nodeName: {
      name: 'EBB_NODE_NAME',
      type: 'string',
      required: true,
      pattern: NODE_NAME_PATTERN,
      format: 'be a node name: a DNS subdomain like node-1',
      hint: 'set it from the downward API (fieldRef spec.nodeName), as deploy/components/daemon.yaml does',
      doc: 'the node the daemon runs on; it keeps the images of the ImageList of that name',
    },
    criEndpoint: {
      name: 'EBB_CRI_ENDPOINT',
      type: 'url',
      default: 'unix:///run/containerd/containerd.sock',
      schemes: ['unix:'],
      format: 'unix:///path/to/runtime.sock',
      check: unixSocketProblem,
      doc: "the container runtime's CRI socket (containerd, CRI-O)",
    },
    pullSecretNamespace: PULL_SECRET_NAMESPACE_SETTING,
    pullConcurrency: { name: 'EBB_PULL_CONCURRENCY', type: 'int', default: 2, min: 1, max: 32, doc: 'image pulls the daemon runs at once' },
    pullTimeout: { name: 'EBB_PULL_TIMEOUT', type: 'duration', default: '10m', min: '10s', max: '6h', doc: 'deadline of one image pull' },
    pullBackoffBase: {
      name: 'EBB_PULL_BACKOFF_BASE',
      type: 'duration',
      default: '5s',
      min: '100ms',
      max: '1h',
      doc: 'first retry delay of a failed pull; it doubles per failure',
    },
    pullBackoffMax: { name: 'EBB_PULL_BACKOFF_MAX', type: 'duration', default: '5m', min: '1s', max: '24h', doc: 'cap of the pull retry delay' },
    recheckPeriod: {
      name: 'EBB_RECHECK_PERIOD',
      type: 'duration',
      default: '5m',
      min: '10s',
      max: '24h',
      doc: 'how often the daemon checks every image of its list against the runtime again (an image removed by the kubelet is pulled again, unless the image filesystem is too full)',
    },
    imageFsHighPercent: {
      name: 'EBB_IMAGE_FS_HIGH_PERCENT',
      type: 'int',
      default: 80,
      min: 1,
      max: 100,
      doc: "used percent of the runtime's image filesystem (as the kubelet measures it for image garbage collection) at or above which the daemon starts no pull: the entry reports `Deferred` and is tried again every re-check period; keep it below the kubelet's `imageGCHighThresholdPercent` (default 85)",
    },
    statusFlush: {
      name: 'EBB_STATUS_FLUSH',
      type: 'duration',
      default: '2s',
      min: '0',
      max: '1m',
      doc: "how long status changes are batched before one write of the ImageList's status (`0`: write each at once)",
    },
  },
  [
    {
      uses: ['pullBackoffBase', 'pullBackoffMax'],
      problems: (v) =>
        v.pullBackoffBase > v.pullBackoffMax
          ? [`EBB_PULL_BACKOFF_BASE (${formatDuration(v.pullBackoffBase)}) must not exceed EBB_PULL_BACKOFF_MAX (${formatDuration(v.pullBackoffMax)})`]
          : [],
    },
  ],
);

/** Pure parser; `loadDaemonConfig` feeds it process.env. Throws one ConfigError listing every problem. */
export function parseDaemonConfig(env: Env): DaemonConfig {
  const v = parseSettings(DAEMON_SETTINGS, env);
  return frozen({
    nodeName: v.nodeName,
    criEndpoint: v.criEndpoint,
    criSocketPath: decodeURIComponent(new URL(v.criEndpoint).pathname),
    pullConcurrency: v.pullConcurrency,
    pullTimeoutMs: v.pullTimeout,
    pullBackoff: { baseMs: v.pullBackoffBase, capMs: v.pullBackoffMax },
    recheckPeriodMs: v.recheckPeriod,
    imageFsHighPercent: v.imageFsHighPercent,
    statusFlushMs: v.statusFlush,
    watchdogMs: v.watchdog,
    pullSecretNamespace: v.pullSecretNamespace,
    kube: kubeAccessOf(v),
    httpAddress: v.httpAddress,
    httpPort: v.httpPort,
    logLevel: v.logLevel,
  });
}

export function loadDaemonConfig(): DaemonConfig {
  return parseDaemonConfig(process.env);
}
