import type { LogLevel } from '../common/log.ts';
import { HTTP_SETTINGS, KUBE_SETTINGS, LOG_SETTINGS, PULL_SECRET_NAMESPACE_SETTING, kubeEnvOf, type KubeEnv } from '../common/process-settings.ts';
import { frozen, parseSettings, table, type Env } from '../common/settings.ts';
import { QUEUE_SETTINGS, queueConfigOf, type QueueConfig } from '../queue/settings.ts';

/** The worker's configuration: parsed and validated once, frozen, passed down. */
export interface WorkerConfig {
  readonly queue: QueueConfig;
  /** Where the apiserver is (KUBECONFIG, or the in-cluster service settings). */
  readonly kube: KubeEnv;
  readonly httpAddress: string;
  readonly httpPort: number;
  /** How long SIGTERM waits for running reconciles before the worker exits anyway. */
  readonly shutdownTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** Where ImageList pull secrets are copied for the node daemons; undefined: pull secrets are not used. */
  readonly pullSecretNamespace: string | undefined;
  /** Pre-warm pulls in progress at once across the cluster (every App, every worker). */
  readonly prewarmPullBudget: number;
}

/** Everything `ebb worker` reads. */
export const WORKER_SETTINGS = table(
  {
    ...KUBE_SETTINGS.entries,
    ...LOG_SETTINGS.entries,
    ...HTTP_SETTINGS.entries,
    ...QUEUE_SETTINGS.entries,
    pullSecretNamespace: PULL_SECRET_NAMESPACE_SETTING,
    prewarmPullBudget: {
      name: 'EBB_PREWARM_PULL_BUDGET',
      type: 'int',
      default: 32,
      min: 1,
      max: 100_000,
      doc: "pre-warm pulls in progress at once across the cluster, every App counted (one pull: one App's images on one node); the nodes past it wait their turn",
    },
    shutdownTimeout: {
      name: 'EBB_SHUTDOWN_TIMEOUT',
      type: 'duration',
      default: '50s',
      min: '0',
      max: '1h',
      doc: 'how long SIGTERM waits for running reconciles; the worker exits at the latest 5s later',
    },
  },
  QUEUE_SETTINGS.checks,
);

/** Pure parser; `loadWorkerConfig` feeds it process.env. Throws one ConfigError listing every problem. */
export function parseWorkerConfig(env: Env): WorkerConfig {
  const v = parseSettings(WORKER_SETTINGS, env);
  return frozen({
    queue: queueConfigOf(v),
    kube: kubeEnvOf(v),
    httpAddress: v.httpAddress,
    httpPort: v.httpPort,
    shutdownTimeoutMs: v.shutdownTimeout,
    logLevel: v.logLevel,
    pullSecretNamespace: v.pullSecretNamespace,
    prewarmPullBudget: v.prewarmPullBudget,
  });
}

export function loadWorkerConfig(): WorkerConfig {
  return parseWorkerConfig(process.env);
}
