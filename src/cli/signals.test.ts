import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { logCrashes, stopOrGiveUp } from './signals.ts';

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

describe('stopOrGiveUp', () => {
  it('resolves undefined when the stop finishes', async () => {
    let stopped = false;
    const outcome = await stopOrGiveUp(async () => {
      await Promise.resolve();
      stopped = true;
    }, 60_000);
    expect(outcome).toBeUndefined();
    expect(stopped).toBe(true);
  });

  it('gives up on a stop that never finishes once the deadline passes', async () => {
    const outcome = await stopOrGiveUp(() => new Promise<void>(() => undefined), 20);
    expect(outcome).toBe('not stopped within 20 ms');
  });

  it('gives up at a second signal', async () => {
    const pending = stopOrGiveUp(() => new Promise<void>(() => undefined), 60_000);
    process.emit('SIGTERM', 'SIGTERM');
    expect(await pending).toBe('second signal SIGTERM');
  });
});
