import { afterEach, describe, expect, it } from 'vitest';
import { stopBeforeExit } from './stop-on-signal.ts';

/** A promise with its resolve, to hold a stop open. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('stopBeforeExit', () => {
  const added: [NodeJS.Signals, NodeJS.SignalsListener][] = [];
  const listen = (signal: NodeJS.Signals, listener: NodeJS.SignalsListener): void => {
    process.on(signal, listener);
    added.push([signal, listener]);
  };
  afterEach(() => {
    for (const [signal, listener] of added.splice(0)) process.off(signal, listener);
  });

  it('holds the handlers that would exit at once until the stop has finished, then raises the signal again', async () => {
    const exits: string[] = [];
    const runnerExit: NodeJS.SignalsListener = (s) => exits.push(`runner ${s}`);
    listen('SIGINT', runnerExit);
    const stop = deferred();
    const stops: string[] = [];
    const raised: string[] = [];
    const release = stopBeforeExit({
      stop: (s) => {
        stops.push(s);
        return stop.promise;
      },
      raise: (s) => raised.push(s),
    });
    expect(process.listeners('SIGINT')).not.toContain(runnerExit);

    process.emit('SIGINT', 'SIGINT');
    // The same key press forwarded by npx, then a SIGTERM: the stop runs once.
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGTERM', 'SIGTERM');
    await flush();
    expect(stops).toEqual(['SIGINT']);
    expect(exits).toEqual([]);
    expect(raised).toEqual([]);

    stop.resolve();
    await flush();
    expect(raised).toEqual(['SIGINT']);
    expect(process.listeners('SIGINT')).toContain(runnerExit);
    release();
    expect(process.listeners('SIGINT').filter((l) => l === runnerExit)).toHaveLength(1);
  });

  it('raises the signal again when the stop fails', async () => {
    const raised: string[] = [];
    stopBeforeExit({ stop: () => Promise.reject(new Error('revert failed')), raise: (s) => raised.push(s) });
    process.emit('SIGTERM', 'SIGTERM');
    await flush();
    expect(raised).toEqual(['SIGTERM']);
  });

  it('puts the held handlers back when released without a signal', () => {
    const runnerExit: NodeJS.SignalsListener = () => undefined;
    listen('SIGTERM', runnerExit);
    const before = process.listeners('SIGTERM').length;
    const release = stopBeforeExit({ stop: () => Promise.resolve() });
    expect(process.listeners('SIGTERM')).not.toContain(runnerExit);
    release();
    expect(process.listeners('SIGTERM')).toContain(runnerExit);
    expect(process.listeners('SIGTERM')).toHaveLength(before);
  });
});
