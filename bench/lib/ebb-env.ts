/**
 * The settings the benchmarks run the watcher and worker with: the sandbox's cluster and Redis, a fresh queue;
 * EBB_KUBE_PROTOBUF is passed on from the benchmark's environment (to compare the worker's pod reads in JSON).
 */
import { randomBytes } from 'node:crypto';

export function benchEbbEnv(sb: { kubeconfig: string; redisUrl: string }, namespaces: string[] = []): Record<string, string> {
  return {
    KUBECONFIG: sb.kubeconfig,
    EBB_REDIS_URL: sb.redisUrl,
    ...(namespaces.length > 0 ? { EBB_NAMESPACES: namespaces.join(',') } : {}),
    EBB_QUEUE_PREFIX: `{ebb-bench-${randomBytes(3).toString('hex')}}`,
    EBB_HTTP_PORT: '0',
    EBB_HTTP_ADDRESS: '127.0.0.1',
    EBB_SCALER: 'false',
    EBB_BOARD: 'false',
    EBB_LOG_LEVEL: 'warn',
    ...(process.env['EBB_KUBE_PROTOBUF'] ? { EBB_KUBE_PROTOBUF: process.env['EBB_KUBE_PROTOBUF'] } : {}),
  };
}
