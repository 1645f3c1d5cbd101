import { describe, expect, it } from 'vitest';
import { ConfigError, configProblems } from '../common/config-error.ts';
import { parseDaemonConfig } from '../daemon/config.ts';
import { cliConfig, parseRunConfig } from './config.ts';

describe('CLI configuration', () => {
  it('reads the log level and format (JSON unless asked)', () => {
    expect(cliConfig({})).toEqual({ logLevel: 'info', logFormat: 'json' });
    expect(cliConfig({ EBB_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => cliConfig({ EBB_LOG_LEVEL: 'loud' })).toThrow(ConfigError);
    expect(() => cliConfig({ EBB_LOG_FORMAT: 'text' })).toThrow(ConfigError);
  });

  it('`ebb run --all`: the watcher and the worker from one environment, the worker on any free port', () => {
    const { watcher, worker } = parseRunConfig({ EBB_HTTP_PORT: '9000', EBB_WORKER_CONCURRENCY: '3' });
    expect(watcher.httpPort).toBe(9000);
    expect(worker.httpPort).toBe(0);
    expect(worker.queue.workerConcurrency).toBe(3);
  });

  it('`ebb run --all`: one ConfigError listing the problems of both, each once', () => {
    const problems = configProblems(() => parseRunConfig({ EBB_BOARD: 'on', EBB_SHUTDOWN_TIMEOUT: 'soon', EBB_QUEUE_ATTEMPTS: '0' }));
    expect(problems.map((p) => p.split(':')[0])).toEqual(['EBB_QUEUE_ATTEMPTS', 'EBB_BOARD', 'EBB_SHUTDOWN_TIMEOUT']);
  });

  it('every process parses its defaults', () => {
    expect(() => parseRunConfig({})).not.toThrow();
    expect(() => parseDaemonConfig({ EBB_NODE_NAME: 'n' })).not.toThrow();
  });
});
