import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/config-error.ts';
import { authorized } from './board.ts';
import { parseWatcherConfig } from './config.ts';

const base = { EBB_REDIS_URL: 'redis://127.0.0.1:6379' };
const TOKEN = 'a-board-token-of-at-least-32-bytes';

describe('parseWatcherConfig', () => {
  it('applies defaults and freezes the result', () => {
    const cfg = parseWatcherConfig({ ...base, EBB_HTTP_ADDRESS: '127.0.0.1' });
    expect(cfg.namespaces).toEqual([]);
    expect(cfg.httpPort).toBe(8080);
    expect(cfg.watchdogMs).toBe(180_000);
    expect(cfg.board).toEqual({ basePath: '/board', readOnly: true, auth: { kind: 'none' } });
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it.each<[string, Record<string, string>, string]>([
    ['bad namespace', { EBB_NAMESPACES: 'ok,Not_OK' }, 'EBB_NAMESPACES: "Not_OK" is not a namespace name'],
    ['bad port', { EBB_HTTP_PORT: '70000' }, 'EBB_HTTP_PORT'],
    ['bad watchdog', { EBB_WATCHDOG: '10' }, 'EBB_WATCHDOG'],
    ['bad log level', { EBB_LOG_LEVEL: 'loud' }, 'EBB_LOG_LEVEL'],
    ['bad redis url', { EBB_REDIS_URL: 'http://x' }, 'EBB_REDIS_URL'],
    ['half basic auth', { EBB_BOARD_USER: 'u' }, 'EBB_BOARD_USER and EBB_BOARD_PASSWORD'],
    ['bad board path', { EBB_BOARD_PATH: 'board' }, 'EBB_BOARD_PATH'],
  ])('rejects %s with a message naming the setting', (_n, env, message) => {
    expect(() => parseWatcherConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => parseWatcherConfig({ ...base, ...env })).toThrow(message);
  });

  it("gives the worker thread the watcher's environment, with its own kubeconfig when one is set", () => {
    const env = { ...base, EBB_HTTP_ADDRESS: '127.0.0.1', KUBECONFIG: '/watcher.kubeconfig', EBB_WORKER_CONCURRENCY: '7' };
    expect(parseWatcherConfig(env).workerThread).toBeUndefined();
    const shared = parseWatcherConfig({ ...env, EBB_WATCHER_WORKER_THREAD: 'true' }).workerThread;
    expect(shared?.env['KUBECONFIG']).toBe('/watcher.kubeconfig');
    expect(shared?.env['EBB_WORKER_CONCURRENCY']).toBe('7');
    const own = parseWatcherConfig({ ...env, EBB_WATCHER_WORKER_THREAD: 'true', EBB_WATCHER_WORKER_THREAD_KUBECONFIG: '/worker.kubeconfig' }).workerThread;
    expect(own?.env['KUBECONFIG']).toBe('/worker.kubeconfig');
    expect(own?.env['EBB_WORKER_CONCURRENCY']).toBe('7');
    expect(own?.heapMb).toBe(256);
  });

  it('lists every problem at once', () => {
    try {
      parseWatcherConfig({ ...base, EBB_HTTP_PORT: 'x', EBB_LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });

  it('keeps Bull Board off on a non-loopback address without credentials, and says why', () => {
    const cfg = parseWatcherConfig({ ...base, EBB_HTTP_ADDRESS: '0.0.0.0' });
    expect(cfg.board).toBeUndefined();
    expect(cfg.boardNote).toContain('EBB_BOARD_TOKEN');
    const withToken = parseWatcherConfig({ ...base, EBB_HTTP_ADDRESS: '0.0.0.0', EBB_BOARD_TOKEN: TOKEN });
    expect(withToken.board?.auth).toEqual({ kind: 'token', token: TOKEN });
    expect(parseWatcherConfig({ ...base, EBB_BOARD: 'false' }).board).toBeUndefined();
  });

  it('reads the scaler switch and its port', () => {
    expect(parseWatcherConfig(base).scalerPort).toBe(9090);
    expect(parseWatcherConfig({ ...base, EBB_SCALER_PORT: '0' }).scalerPort).toBe(0);
    expect(parseWatcherConfig({ ...base, EBB_SCALER: 'false' }).scalerPort).toBeUndefined();
  });

  it.each<[Record<string, string>, string]>([
    [{ EBB_SCALER_PORT: 'off' }, 'EBB_SCALER_PORT: must be a port number 0..65535 (got "off"); to switch the scaler off, set EBB_SCALER=false'],
    [{ EBB_BOARD: 'on' }, 'EBB_BOARD: must be true or false (got "on"); write true instead'],
    [{ EBB_BOARD_READ_ONLY: 'no' }, 'EBB_BOARD_READ_ONLY: must be true or false (got "no"); write false instead'],
  ])('refuses the old spellings %j with what to write instead', (env, problem) => {
    expect(() => parseWatcherConfig({ ...base, ...env })).toThrow(problem);
  });

  it('reads namespaces as a trimmed comma-separated list', () => {
    expect(parseWatcherConfig({ ...base, EBB_NAMESPACES: ' a, b ,,c ' }).namespaces).toEqual(['a', 'b', 'c']);
  });

  it('reads Bull Board credentials and never shows a secret in a message', () => {
    const basic = parseWatcherConfig({ ...base, EBB_HTTP_ADDRESS: '0.0.0.0', EBB_BOARD_USER: 'u', EBB_BOARD_PASSWORD: TOKEN, EBB_BOARD_READ_ONLY: 'false' });
    expect(basic.board).toEqual({ basePath: '/board', readOnly: false, auth: { kind: 'basic', user: 'u', password: TOKEN } });
    expect(() => parseWatcherConfig({ ...base, EBB_BOARD_PASSWORD: 'hunter2' })).toThrow(/^(?![\s\S]*hunter2)[\s\S]*EBB_BOARD_USER and EBB_BOARD_PASSWORD/);
  });
});

describe('Bull Board secrets and Kubernetes authentication', () => {
  it('refuses a token or password shorter than 32 bytes, naming the setting and not the value', () => {
    for (const [setting, env] of [
      ['EBB_BOARD_TOKEN', { EBB_BOARD_TOKEN: 'short-but-secret-31-bytes-long!' }],
      ['EBB_BOARD_PASSWORD', { EBB_BOARD_USER: 'u', EBB_BOARD_PASSWORD: 'short-but-secret-31-bytes-long!' }],
    ] as const) {
      const parse = (): unknown => parseWatcherConfig({ ...base, ...env });
      expect(parse).toThrow(ConfigError);
      expect(parse).toThrow(`invalid configuration: ${setting}: must be at least 32 bytes`);
      expect(parse).not.toThrow(/short-but-secret/);
    }
    expect(parseWatcherConfig({ ...base, EBB_BOARD_TOKEN: 'x'.repeat(32) }).board?.auth.kind).toBe('token');
  });

  it('reads the resource a user must be allowed to get, and serves the board on any address with it', () => {
    const cfg = parseWatcherConfig({
      ...base,
      EBB_HTTP_ADDRESS: '0.0.0.0',
      EBB_BOARD_KUBE_AUTH_RESOURCE: 'apps.apps.ebb.dev',
      EBB_BOARD_KUBE_AUTH_NAMESPACE: 'ebb-system',
    });
    expect(cfg.board?.auth).toEqual({ kind: 'kubernetes', access: { group: 'apps.ebb.dev', resource: 'apps', namespace: 'ebb-system', name: undefined } });
    const core = parseWatcherConfig({ ...base, EBB_BOARD_KUBE_AUTH_RESOURCE: 'services', EBB_BOARD_KUBE_AUTH_NAME: 'ebb-board' });
    expect(core.board?.auth).toEqual({ kind: 'kubernetes', access: { group: '', resource: 'services', namespace: undefined, name: 'ebb-board' } });
    expect(() => parseWatcherConfig({ ...base, EBB_BOARD_KUBE_AUTH_RESOURCE: 'apps', EBB_BOARD_TOKEN: TOKEN })).toThrow('choose one way to authenticate');
    expect(() => parseWatcherConfig({ ...base, EBB_BOARD_KUBE_AUTH_NAMESPACE: 'x' })).toThrow(
      'EBB_BOARD_KUBE_AUTH_NAMESPACE is set but EBB_BOARD_KUBE_AUTH_RESOURCE is not',
    );
    expect(() => parseWatcherConfig({ ...base, EBB_BOARD_KUBE_AUTH_RESOURCE: 'Apps/x' })).toThrow('EBB_BOARD_KUBE_AUTH_RESOURCE: must be resource.group');
  });
});

describe('Bull Board authorization', () => {
  const basic = (u: string, p: string): string => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  it.each<[string, string | undefined, Parameters<typeof authorized>[1], 'write' | 'none']>([
    ['no auth configured', undefined, { kind: 'none' }, 'write'],
    ['missing header', undefined, { kind: 'token', token: 't' }, 'none'],
    ['bearer token', 'Bearer t', { kind: 'token', token: 't' }, 'write'],
    ['wrong bearer token', 'Bearer x', { kind: 'token', token: 't' }, 'none'],
    ['token as basic password', basic('anyone', 't'), { kind: 'token', token: 't' }, 'write'],
    ['basic ok', basic('u', 'p'), { kind: 'basic', user: 'u', password: 'p' }, 'write'],
    ['basic wrong password', basic('u', 'x'), { kind: 'basic', user: 'u', password: 'p' }, 'none'],
    ['bearer where basic is configured', 'Bearer p', { kind: 'basic', user: 'u', password: 'p' }, 'none'],
  ])('%s', async (_n, header, auth, ok) => {
    expect(await authorized(header, auth)).toBe(ok);
  });

  it('asks the reviewer about a Kubernetes token, as a Bearer token or a Basic password', async () => {
    const auth = { kind: 'kubernetes', access: { group: '', resource: 'services', namespace: undefined, name: undefined } } as const;
    const reviewer = (token: string): Promise<'read' | 'none'> => Promise.resolve(token === 'good' ? 'read' : 'none');
    expect(await authorized('Bearer good', auth, reviewer)).toBe('read');
    expect(await authorized(basic('anyone', 'good'), auth, reviewer)).toBe('read');
    expect(await authorized('Bearer bad', auth, reviewer)).toBe('none');
    expect(await authorized('Bearer ', auth, reviewer)).toBe('none');
    expect(await authorized('Bearer good', auth)).toBe('none');
  });
});
