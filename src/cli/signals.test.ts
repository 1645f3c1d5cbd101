import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { logCrashes } from './signals.ts';

describe('logCrashes', () => {
  it.each(['uncaughtException', 'unhandledRejection'] as const)('logs a %s as one fatal line and exits 1', (kind) => {
    const lines: { obj: object; msg: string }[] = [];
    const exits: number[] = [];
    const source = new EventEmitter();
    logCrashes({ fatal: (obj, msg) => lines.push({ obj, msg }) }, (code) => exits.push(code), source);
    source.emit(kind, new Error('boom'));
    expect(exits).toEqual([1]);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.obj).toMatchObject({ kind, err: { message: 'boom', stack: expect.stringContaining('boom') as unknown } });
  });

  it('logs a thrown non-Error too', () => {
    const lines: object[] = [];
    const source = new EventEmitter();
    logCrashes({ fatal: (obj) => lines.push(obj) }, () => undefined, source);
    source.emit('unhandledRejection', 'plain string');
    expect(lines[0]).toMatchObject({ err: { message: 'plain string' } });
  });
});
