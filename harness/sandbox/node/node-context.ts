/**
 * What a pod worker needs from its simulated node: identity, image store, live timings and faults, the
 * apiserver seams, IPs, and the node's resource bookkeeping for resize admission.
 */
import { AbortedError, sleep } from '../../../src/common/wait.ts';
import type { Logger } from '../../../src/common/log.ts';
import type { PodIPPool } from './addresses.ts';
import type { ImageStore } from './image-store.ts';
import type { EventSink, PodApi } from './pod-api.ts';
import type { NodeCapacityView } from './plan.ts';
import type { KubeletFaults, KubeletTimings } from './timings.ts';

export interface NodeContext {
  name: string;
  hostIP: string;
  store: ImageStore;
  timings(): KubeletTimings;
  faults(): KubeletFaults;
  api: PodApi;
  events: EventSink;
  ips: PodIPPool;
  /** Node allocatable and the requests of the node's other pods. */
  capacity(podUid: string): NodeCapacityView;
  /** Runs a kubelet image pull, one at a time when serializeImagePulls is on. */
  pullSlot<T>(fn: () => Promise<T>): Promise<T>;
  log: Logger;
  now(): number;
  /** Sleeps `ms` of simulated delay (0 returns at once); rejects with AbortedError on abort. */
  delay(ms: number, signal: AbortSignal): Promise<void>;
  /** The node's lifetime: image pulls run under it, so a cancelled pod sync never cancels a pull others share. */
  lifetime: AbortSignal;
}

/** Waits for `p`, but rejects with AbortedError as soon as `signal` aborts (`p` itself goes on). */
export function abandonOnAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

export function delayFn(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return sleep(0, signal);
  return ms <= 0 ? Promise.resolve() : sleep(ms, signal);
}

/** A FIFO slot: `run` calls `fn` once every earlier call has settled (kubelet serial image puller). */
export function serialSlot(enabled: () => boolean): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    if (!enabled()) return fn();
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}
