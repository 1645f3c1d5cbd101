import { describe, expect, it } from 'vitest';
import { parseWatcherConfig } from '../../src/watcher/config.ts';
import { sandboxBoardLogin } from './run.ts';

describe('sandboxBoardLogin', () => {
  it('makes up credentials the watcher then requires, and prints them', () => {
    const env: Record<string, string | undefined> = { EBB_HTTP_ADDRESS: '127.0.0.1' };
    const [note] = sandboxBoardLogin(env);
    const password = env['EBB_BOARD_PASSWORD'] ?? '';
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect(note).toContain(`ebb / ${password}`);
    expect(parseWatcherConfig(env).board?.auth).toEqual({ kind: 'basic', user: 'ebb', password });
  });

  it('keeps credentials the environment names, and a board switched off', () => {
    for (const given of [{ EBB_BOARD_TOKEN: 't' }, { EBB_BOARD_USER: 'u', EBB_BOARD_PASSWORD: 'p' }, { EBB_BOARD: 'false' }]) {
      const env: Record<string, string | undefined> = { ...given };
      expect(sandboxBoardLogin(env)).toEqual([]);
      expect(env).toEqual(given);
    }
  });
});
