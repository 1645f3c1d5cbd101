import { readKubeEnv, readLogLevel, readPort, type Env, type KubeEnv } from '../common/env.ts';
import { readQueueConfig, type QueueConfig } from '../queue/config-schema.ts';
import { ConfigError } from '../queue/errors.ts';
import { parseDuration } from '../common/duration.ts';

/** The worker's configuration: parsed and validated once, frozen, passed down. */
export interface WorkerConfig {
  readonly queue: QueueConfig;
  /** Where the apiserver is (KUBECONFIG, or the in-cluster service settings). */
  readonly kube: KubeEnv;
  readonly httpAddress: string;
  readonly httpPort: number;
  /** How long SIGTERM waits for running reconciles before the worker exits anyway. */
  readonly shutdownTimeoutMs: number;
  readonly logLevel: string;
}

export const WORKER_ENV = {
  httpAddress: 'EBB_HTTP_ADDRESS',
  httpPort: 'EBB_HTTP_PORT',
  shutdownTimeout: 'EBB_SHUTDOWN_TIMEOUT',
  logLevel: 'EBB_LOG_LEVEL',
} as const;

export function parseWorkerConfig(env: Env): WorkerConfig {
  const problems: string[] = [];
  const queue = readQueueConfig(env, problems);
  const httpPort = readPort(env, WORKER_ENV.httpPort, 8080, problems);
  const shutdownText = env[WORKER_ENV.shutdownTimeout] ?? '50s';
  const shutdownTimeoutMs = parseDuration(shutdownText);
  if (shutdownTimeoutMs === undefined) problems.push(`${WORKER_ENV.shutdownTimeout}: must be a duration like 50s (got "${shutdownText}")`);
  const logLevel = readLogLevel(env, WORKER_ENV.logLevel, problems);
  if (problems.length > 0 || !queue) throw new ConfigError(problems);
  return Object.freeze({
    queue,
    kube: readKubeEnv(env),
    httpAddress: env[WORKER_ENV.httpAddress] ?? '0.0.0.0',
    httpPort,
    shutdownTimeoutMs: shutdownTimeoutMs ?? 50_000,
    logLevel,
  });
}

export function loadWorkerConfig(): WorkerConfig {
  return parseWorkerConfig(process.env);
}
