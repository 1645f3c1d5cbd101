/** Settings every long-running process reads the same way: where the apiserver is, logging, HTTP, watches. */
import { LOG_LEVELS } from './log.ts';
import { table, type Values } from './settings.ts';

export const KUBE_SETTINGS = table({
  kubeconfig: {
    name: 'KUBECONFIG',
    type: 'string',
    defaultDoc: '`~/.kube/config`, else in-cluster',
    doc: 'kubeconfig file, or a list of them merged as kubectl does; in a pod without one, the service account is used',
  },
  serviceHost: {
    name: 'KUBERNETES_SERVICE_HOST',
    type: 'string',
    defaultDoc: 'set by Kubernetes',
    doc: 'the apiserver address Kubernetes puts in every pod (not set by hand); used with the service account when there is no kubeconfig',
  },
  servicePort: {
    name: 'KUBERNETES_SERVICE_PORT',
    type: 'port',
    defaultDoc: 'set by Kubernetes',
    doc: 'the apiserver port Kubernetes puts in every pod (not set by hand)',
  },
  kubeRequestTimeout: {
    name: 'EBB_KUBE_REQUEST_TIMEOUT',
    type: 'duration',
    default: '30s',
    min: '1s',
    max: '10m',
    doc: 'deadline of every apiserver request other than a watch (a request without an answer by then fails and is retried like an unreachable apiserver)',
  },
});

/** Where the apiserver is, as the kube client reads it: KUBECONFIG, else the in-cluster service settings. */
export type KubeEnv = Readonly<Partial<Record<'KUBECONFIG' | 'KUBERNETES_SERVICE_HOST' | 'KUBERNETES_SERVICE_PORT', string>>>;

/** How a process reaches the apiserver: where it is, the deadline of each request, and whether it reads protobuf. */
export interface KubeAccess {
  readonly env: KubeEnv;
  readonly requestTimeoutMs: number;
  /** Read built-in objects in protobuf where the process can decode them; absent: JSON. */
  readonly protobuf?: boolean;
}

export function kubeAccessOf(v: Values<typeof KUBE_SETTINGS.entries>): KubeAccess {
  return Object.freeze({ env: kubeEnvOf(v), requestTimeoutMs: v.kubeRequestTimeout });
}

export function kubeEnvOf(v: Values<typeof KUBE_SETTINGS.entries>): KubeEnv {
  return Object.freeze({
    ...(v.kubeconfig === undefined ? {} : { KUBECONFIG: v.kubeconfig }),
    ...(v.serviceHost === undefined ? {} : { KUBERNETES_SERVICE_HOST: v.serviceHost }),
    ...(v.servicePort === undefined ? {} : { KUBERNETES_SERVICE_PORT: String(v.servicePort) }),
  });
}

export const LOG_SETTINGS = table({
  logLevel: { name: 'EBB_LOG_LEVEL', type: 'enum', values: LOG_LEVELS, default: 'info', doc: 'log level of the JSON lines on stdout' },
});

export const HTTP_SETTINGS = table({
  httpAddress: {
    name: 'EBB_HTTP_ADDRESS',
    type: 'string',
    default: '0.0.0.0',
    pattern: /^[A-Za-z0-9.:%-]+$/,
    format: 'be an IP address or a host name, like 0.0.0.0 or 127.0.0.1',
    doc: "address of the HTTP server (`/healthz`, `/readyz`, `/metrics`, and Bull Board on the watcher); the watcher's KEDA scaler listens on it too",
  },
  httpPort: { name: 'EBB_HTTP_PORT', type: 'port', default: 8080, doc: 'port of the HTTP server (`0`: any free port)' },
});

export const WATCH_SETTINGS = table({
  watchdog: {
    name: 'EBB_WATCHDOG',
    type: 'duration',
    default: '3m',
    min: '1s',
    max: '1h',
    doc: 'a watch that delivers nothing for this long (not even a bookmark) is re-opened',
  },
});

/**
 * The namespace of pull-secret copies (src/api/pull-secret-copy.ts), the same for the worker, which makes
 * them, and the daemon, which reads them. Unset, pull secrets are not used: the opt-in.
 */
export const PULL_SECRET_NAMESPACE_SETTING = {
  name: 'EBB_PULL_SECRET_NAMESPACE',
  type: 'string',
  pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  format: 'be a namespace name',
  defaultDoc: 'unset: pull secrets are not used',
  doc: 'namespace of the copies of ImageList pull secrets that the worker makes and the daemon reads (deploy/components/daemon-pull-secrets sets it)',
} as const;
