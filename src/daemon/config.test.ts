import { describe, expect, it } from 'vitest';
import { configProblems } from '../common/config-error.ts';
import { parseDaemonConfig } from './config.ts';

const base = { EBB_NODE_NAME: 'node-1' };

function problemsOf(env: Record<string, string>): readonly string[] {
  return configProblems(() => parseDaemonConfig(env));
}

describe('parseDaemonConfig', () => {
  it('applies defaults and freezes the result', () => {
    const cfg = parseDaemonConfig(base);
    expect(cfg).toEqual({
      nodeName: 'node-1',
      criEndpoint: 'unix:///run/containerd/containerd.sock',
      criSocketPath: '/run/containerd/containerd.sock',
      pullConcurrency: 2,
      pullTimeoutMs: 600_000,
      pullBackoff: { baseMs: 5_000, capMs: 300_000 },
      recheckPeriodMs: 300_000,
      imageFsHighPercent: 80,
      statusFlushMs: 2_000,
      watchdogMs: 180_000,
      kube: { env: {}, requestTimeoutMs: 30_000 },
      httpAddress: '0.0.0.0',
      httpPort: 8080,
      logLevel: 'info',
    });
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(Object.isFrozen(cfg.pullBackoff)).toBe(true);
  });

  it('reads every setting', () => {
    const cfg = parseDaemonConfig({
      ...base,
      EBB_CRI_ENDPOINT: 'unix:///var/run/crio/crio.sock',
      EBB_PULL_CONCURRENCY: '4',
      EBB_PULL_TIMEOUT: '30m',
      EBB_PULL_BACKOFF_BASE: '1s',
      EBB_PULL_BACKOFF_MAX: '1m',
      EBB_RECHECK_PERIOD: '1h',
      EBB_STATUS_FLUSH: '0',
      EBB_WATCHDOG: '1m',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      EBB_LOG_LEVEL: 'debug',
    });
    expect(cfg).toMatchObject({
      criSocketPath: '/var/run/crio/crio.sock',
      pullConcurrency: 4,
      pullTimeoutMs: 1_800_000,
      pullBackoff: { baseMs: 1_000, capMs: 60_000 },
      recheckPeriodMs: 3_600_000,
      statusFlushMs: 0,
      watchdogMs: 60_000,
      kube: { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, requestTimeoutMs: 30_000 },
      logLevel: 'debug',
    });
  });

  it.each<[Record<string, string>, string]>([
    [{}, 'EBB_NODE_NAME: must be set; set it from the downward API (fieldRef spec.nodeName), as deploy/components/daemon.yaml does'],
    [
      { ...base, EBB_NODE_NAME: 'Node_1' },
      'EBB_NODE_NAME: must be a node name: a DNS subdomain like node-1 (got "Node_1"); set it from the downward API (fieldRef spec.nodeName), as deploy/components/daemon.yaml does',
    ],
    [
      { ...base, EBB_CRI_ENDPOINT: '/run/containerd/containerd.sock' },
      'EBB_CRI_ENDPOINT: not a URL; expected unix:///path/to/runtime.sock (got "/run/containerd/containerd.sock")',
    ],
    [{ ...base, EBB_CRI_ENDPOINT: 'tcp://127.0.0.1:1234' }, 'EBB_CRI_ENDPOINT: unsupported scheme "tcp:"; use unix: (got "tcp://127.0.0.1:1234")'],
    [
      { ...base, EBB_CRI_ENDPOINT: 'unix://run/containerd.sock' },
      'EBB_CRI_ENDPOINT: must be unix:// followed by an absolute socket path, like unix:///run/containerd/containerd.sock (got "unix://run/containerd.sock")',
    ],
    [{ ...base, EBB_PULL_CONCURRENCY: '0' }, 'EBB_PULL_CONCURRENCY: must be an integer from 1 to 32 (got "0")'],
    [{ ...base, EBB_PULL_TIMEOUT: '1s' }, 'EBB_PULL_TIMEOUT: must be between 10s and 6h (got "1s")'],
    [{ ...base, EBB_PULL_BACKOFF_BASE: '10m' }, 'EBB_PULL_BACKOFF_BASE (10m) must not exceed EBB_PULL_BACKOFF_MAX (5m)'],
    [{ ...base, EBB_RECHECK_PERIOD: '0' }, 'EBB_RECHECK_PERIOD: must be between 10s and 24h (got "0")'],
    [{ ...base, EBB_STATUS_FLUSH: '5m' }, 'EBB_STATUS_FLUSH: must be between 0 and 1m (got "5m")'],
  ])('refuses %j', (env, problem) => {
    expect(problemsOf(env)).toEqual([problem]);
  });

  it('lists every problem at once', () => {
    expect(problemsOf({ EBB_PULL_CONCURRENCY: 'x', EBB_LOG_LEVEL: 'loud' }).map((p) => p.split(':')[0])).toEqual([
      'EBB_LOG_LEVEL',
      'EBB_NODE_NAME',
      'EBB_PULL_CONCURRENCY',
    ]);
  });
});
