import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { throttledWarn, type Logger } from './log.ts';

function capture(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log: Logger = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { log, lines };
}

describe('throttledWarn', () => {
  it('logs a repeated error once per interval, then says how many it held back', () => {
    const { log, lines } = capture();
    let t = 0;
    const warn = throttledWarn(log, 'worker error', 1_000, () => t);
    for (let i = 0; i < 5; i++) warn(new Error('connect ECONNREFUSED'));
    expect(lines).toHaveLength(1);
    t = 1_000;
    warn(new Error('connect ECONNREFUSED'));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ msg: 'worker error', err: 'connect ECONNREFUSED', suppressed: 4 });
  });

  it('logs a different error at once', () => {
    const { log, lines } = capture();
    const warn = throttledWarn(log, 'worker error', 60_000, () => 0);
    warn(new Error('a'));
    warn(new Error('b'));
    expect(lines.map((l) => l['err'])).toEqual(['a', 'b']);
  });
});
