import { describe, expect, it } from 'vitest';
import { boardLogin, runningBanner, type RunningAll } from './run.ts';

const all = (over: Partial<RunningAll>): RunningAll => ({
  host: '127.0.0.1',
  watcherPort: 8080,
  workerPort: 8081,
  board: { path: '/board', login: undefined },
  boardNote: undefined,
  stopDeadlineMs: 1_000,
  stop: () => Promise.resolve(),
  ...over,
});

describe('runningBanner', () => {
  it('prints the board address, and how to log in without showing the secret', () => {
    expect(runningBanner(all({}), {})).toContain('  Bull Board:  http://127.0.0.1:8080/board\n  Rollouts:    http://127.0.0.1:8080/rollouts/ (same login)\n');
    const basic = runningBanner(all({ board: { path: '/ops/board', login: boardLogin({ kind: 'basic', user: 'ops', password: 's3cret' }) } }), {});
    expect(basic).toContain('  Bull Board:  http://127.0.0.1:8080/ops/board (user ops, password of EBB_BOARD_PASSWORD)\n');
    expect(basic).toContain('  Rollouts:    http://127.0.0.1:8080/ops/rollouts/ (same login)\n');
    expect(basic).not.toContain('s3cret');
    const token = runningBanner(all({ board: { path: '/board', login: boardLogin({ kind: 'token', token: 'tok3n' }) } }), {});
    expect(token).toContain('Bearer token of EBB_BOARD_TOKEN');
    expect(token).not.toContain('tok3n');
  });

  it('says the board is off, and why', () => {
    const note = 'Bull Board is off: set EBB_BOARD_TOKEN (or EBB_BOARD_USER/EBB_BOARD_PASSWORD) to serve it on 0.0.0.0';
    expect(runningBanner(all({ board: undefined, boardNote: note }), {})).toContain(`  Bull Board:  off (${note})\n`);
    expect(runningBanner(all({ board: undefined }), {})).toContain('  Bull Board:  off\n');
    expect(runningBanner(all({ board: undefined }), {})).not.toContain('Rollouts:');
  });

  it('puts notes before the last line', () => {
    const lines = runningBanner(all({}), { KUBECONFIG: '/k' }, ['  note']).trimEnd().split('\n');
    expect(lines.at(1)).toBe('  KUBECONFIG=/k');
    expect(lines.slice(-2)).toEqual(['  note', '  Ctrl-C stops everything']);
  });
});
