import { describe, expect, it } from 'vitest';
import { ConfigError } from '../common/config-error.ts';
import { authorized } from './board.ts';
import { parseWatcherConfig } from './config.ts';

const base = { EBB_REDIS_URL: 'redis://127.0.0.1:6379' };

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
    const withToken = parseWatcherConfig({ ...base, EBB_HTTP_ADDRESS: '0.0.0.0', EBB_BOARD_TOKEN: 's3cret' });
    expect(withToken.board?.auth).toEqual({ kind: 'token', token: 's3cret' });
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
    const basic = parseWatcherConfig({ ...base, EBB_HTTP_ADDRESS: '0.0.0.0', EBB_BOARD_USER: 'u', EBB_BOARD_PASSWORD: 'p', EBB_BOARD_READ_ONLY: 'false' });
    expect(basic.board).toEqual({ basePath: '/board', readOnly: false, auth: { kind: 'basic', user: 'u', password: 'p' } });
    expect(() => parseWatcherConfig({ ...base, EBB_BOARD_PASSWORD: 'hunter2' })).toThrow(/^(?![\s\S]*hunter2)[\s\S]*EBB_BOARD_USER and EBB_BOARD_PASSWORD/);
  });
});

describe('Bull Board authorization', () => {
  const basic = (u: string, p: string): string => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  it.each<[string, string | undefined, Parameters<typeof authorized>[1], boolean]>([
    ['no auth configured', undefined, { kind: 'none' }, true],
    ['missing header', undefined, { kind: 'token', token: 't' }, false],
    ['bearer token', 'Bearer t', { kind: 'token', token: 't' }, true],
    ['wrong bearer token', 'Bearer x', { kind: 'token', token: 't' }, false],
    ['token as basic password', basic('anyone', 't'), { kind: 'token', token: 't' }, true],
    ['basic ok', basic('u', 'p'), { kind: 'basic', user: 'u', password: 'p' }, true],
    ['basic wrong password', basic('u', 'x'), { kind: 'basic', user: 'u', password: 'p' }, false],
    ['bearer where basic is configured', 'Bearer p', { kind: 'basic', user: 'u', password: 'p' }, false],
  ])('%s', (_n, header, auth, ok) => {
    expect(authorized(header, auth)).toBe(ok);
  });
});
