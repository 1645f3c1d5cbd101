import { describe, expect, it } from 'vitest';
import type { ObjectKey } from '../queue/names.ts';
import { PodHolds, type HoldTimers } from './pod-holds.ts';

const web: ObjectKey = { kind: 'App', namespace: 'a', name: 'web' };
const db: ObjectKey = { kind: 'App', namespace: 'a', name: 'db' };

function setup(): { holds: PodHolds; fired: ObjectKey[]; released: string[]; runOut: () => void; pending: () => number; ac: AbortController } {
  const timers = new Set<{ fn: () => void }>();
  const fake: HoldTimers = {
    set: (fn) => {
      const t = { fn };
      timers.add(t);
      return t;
    },
    clear: (t) => timers.delete(t as { fn: () => void }),
  };
  const fired: ObjectKey[] = [];
  const released: string[] = [];
  const ac = new AbortController();
  const holds = new PodHolds({ fire: (k) => fired.push(k), signal: ac.signal, timers: fake, onReleased: (r) => released.push(r) });
  const runOut = (): void => {
    for (const t of [...timers]) {
      timers.delete(t);
      t.fn();
    }
  };
  return { holds, fired, released, runOut, pending: () => timers.size, ac };
}

describe('PodHolds', () => {
  it('a delete awaiting its App status: released by an event of that App, not of another', () => {
    const { holds, fired, released, runOut } = setup();
    holds.hold('a/web-0', web, 'await-status');
    holds.hold('a/db-0', db, 'await-status');
    expect(holds.appEvent(web)).toBe(1);
    runOut();
    expect(fired).toEqual([db]);
    expect(released).toEqual(['status-counted']);
    expect(holds.size).toBe(0);
  });

  it('a change of a terminating pod awaiting its removal: released by the pod, not by an App event', () => {
    const { holds, fired, released, runOut } = setup();
    holds.hold('a/web-0', web, 'await-removal');
    holds.hold('a/web-1', web, 'await-removal');
    expect(holds.appEvent(web)).toBe(0);
    expect(holds.release('a/web-0')).toBe(true);
    runOut();
    expect(fired).toEqual([web]);
    expect(released).toEqual(['covered']);
  });

  it('a pod awaiting both: the App event leaves the removal to wait for; one timer per pod', () => {
    const { holds, fired, runOut, pending } = setup();
    holds.hold('a/web-0', web, 'await-status');
    holds.hold('a/web-0', web, 'await-removal');
    expect(pending()).toBe(1);
    expect(holds.appEvent(web)).toBe(0);
    expect(holds.size).toBe(1);
    runOut();
    expect(fired).toEqual([web]);
  });

  it('drops every hold once the watcher stops', () => {
    const { holds, fired, runOut, ac } = setup();
    holds.hold('a/web-0', web, 'await-removal');
    ac.abort();
    runOut();
    expect(fired).toEqual([]);
    expect(holds.size).toBe(0);
  });
});
