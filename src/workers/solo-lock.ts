/**
 * One process's reconciles, shared or alone: every reconcile holds the lock shared, except a suspect's (a key
 * whose earlier run died with its worker), which waits until nothing else runs in this process and keeps anything
 * new from starting until it ends. A worker killed during a run alone was killed by that run's key, or by
 * something outside every key; never by a co-runner. Waiters are served in order; a waiting exclusive run holds
 * back later shared ones, so it is never starved.
 */
import { AbortedError } from '../common/wait.ts';

export type Release = () => void;

export interface SoloLock {
  shared(signal: AbortSignal): Promise<Release>;
  exclusive(signal: AbortSignal): Promise<Release>;
}

interface Waiter {
  exclusive: boolean;
  grant: () => void;
}

export function soloLock(): SoloLock {
  let sharedHolders = 0;
  let exclusiveHeld = false;
  const queue: Waiter[] = [];

  const canGrant = (exclusive: boolean): boolean => !exclusiveHeld && (!exclusive || sharedHolders === 0);
  const pump = (): void => {
    for (let head = queue[0]; head && canGrant(head.exclusive); head = queue[0]) {
      queue.shift();
      head.grant();
    }
  };
  const take = (exclusive: boolean): void => {
    if (exclusive) exclusiveHeld = true;
    else sharedHolders++;
  };
  const releaser = (exclusive: boolean): Release => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (exclusive) exclusiveHeld = false;
      else sharedHolders--;
      pump();
    };
  };
  const acquire = (exclusive: boolean, signal: AbortSignal): Promise<Release> => {
    if (signal.aborted) return Promise.reject(new AbortedError());
    if (queue.length === 0 && canGrant(exclusive)) {
      take(exclusive);
      return Promise.resolve(releaser(exclusive));
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
        reject(new AbortedError());
        // A shared waiter behind a cancelled exclusive one may go now.
        pump();
      };
      const waiter: Waiter = {
        exclusive,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          take(exclusive);
          resolve(releaser(exclusive));
        },
      };
      queue.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };
  return { shared: (signal) => acquire(false, signal), exclusive: (signal) => acquire(true, signal) };
}
