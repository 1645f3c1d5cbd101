/**
 * Reporting an object the watcher left out for its size (`ObjectTooLarge`): a Warning Event on the object, so
 * its owner learns why ebb does nothing with it. Rate-limited twice, so a tenant who keeps writing oversized
 * objects cannot make the watcher write Events in a loop: once per object per OBJECT_INTERVAL_MS, and at most
 * BUCKET_SIZE Events per BUCKET_REFILL_MS over all objects. The writes are fire-and-forget, each with its own
 * deadline: a watch never waits for one.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { API_VERSION, GROUP, IMAGE_LIST_KIND } from '../api/group.ts';
import { errorMessage } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import type { OversizedObject } from '../kube/paged-list.ts';
import type { ResourceRef } from '../kube/paths.ts';

/** What the Event regards: the object's API version and kind, from the source's resource. */
const KINDS: Record<string, { apiVersion: string; kind: string }> = {
  apps: { apiVersion: API_VERSION, kind: 'App' },
  pods: { apiVersion: 'v1', kind: 'Pod' },
  imagelists: { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND },
  imagepulljobs: { apiVersion: API_VERSION, kind: 'ImagePullJob' },
  nodes: { apiVersion: 'v1', kind: 'Node' },
};

export const OBJECT_INTERVAL_MS = 60 * 60_000;
export const BUCKET_SIZE = 10;
export const BUCKET_REFILL_MS = 60_000;
/** Objects remembered for the per-object limit; the oldest is forgotten first. */
const REMEMBERED = 4096;
const WRITE_TIMEOUT_MS = 10_000;
export const OBJECT_TOO_LARGE = 'ObjectTooLarge';

export interface EventCreator {
  create(namespace: string, body: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** Whether an Event may be written now, for `key`; records it when so. */
export class EventGate {
  private readonly last = new Map<string, number>();
  private tokens = BUCKET_SIZE;
  private refilledAt: number;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    this.refilledAt = now();
  }

  admit(key: string): boolean {
    const t = this.now();
    const before = this.last.get(key);
    if (before !== undefined && t - before < OBJECT_INTERVAL_MS) return false;
    const refills = Math.floor((t - this.refilledAt) / BUCKET_REFILL_MS);
    if (refills > 0) {
      this.tokens = Math.min(BUCKET_SIZE, this.tokens + refills * BUCKET_SIZE);
      this.refilledAt += refills * BUCKET_REFILL_MS;
    }
    if (this.tokens <= 0) return false;
    this.tokens--;
    this.last.delete(key);
    this.last.set(key, t);
    if (this.last.size > REMEMBERED) {
      const oldest = this.last.keys().next();
      if (!oldest.done) this.last.delete(oldest.value);
    }
    return true;
  }
}

export function tooLargeNote(resource: string, obj: OversizedObject): string {
  return (
    `this ${KINDS[resource]?.kind ?? resource} is larger than ebb reads (${obj.limitBytes} bytes in one answer): ` +
    'ebb does not reconcile it, nor anything that depends on it, until it is smaller'
  );
}

/** The Event for `obj` of `ref`'s resource, or undefined for an object with no namespace (Events are namespaced). */
export function tooLargeEvent(ref: ResourceRef, obj: OversizedObject, now: Date, instance: string): Record<string, unknown> | undefined {
  if (!obj.namespace || !obj.name) return undefined;
  const kind = KINDS[ref.resource] ?? { apiVersion: ref.group ? `${ref.group}/${ref.version}` : ref.version, kind: ref.resource };
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${obj.name}.${now.getTime().toString(16)}${randomBytes(4).toString('hex')}`, namespace: obj.namespace },
    eventTime: now.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    reportingController: `${GROUP}/ebb`,
    reportingInstance: instance,
    action: 'Watch',
    reason: OBJECT_TOO_LARGE,
    type: 'Warning',
    note: tooLargeNote(ref.resource, obj),
    regarding: { ...kind, name: obj.name, namespace: obj.namespace, uid: obj.uid, resourceVersion: obj.resourceVersion },
  };
}

/** Writes the (rate-limited) Events of oversized objects. */
export function tooLargeEvents(events: EventCreator, log: Logger, gate = new EventGate()): (ref: ResourceRef, obj: OversizedObject) => void {
  const instance = `ebb-watcher-${hostname()}`.slice(0, 128);
  return (ref, obj) => {
    const body = tooLargeEvent(ref, obj, new Date(), instance);
    if (!body || !gate.admit(`${ref.resource} ${obj.namespace ?? ''}/${obj.name} ${obj.uid ?? ''}`)) return;
    events.create(obj.namespace ?? '', body, AbortSignal.timeout(WRITE_TIMEOUT_MS)).catch((err: unknown) => {
      log.debug({ resource: ref.resource, namespace: obj.namespace, name: obj.name, err: errorMessage(err) }, 'could not record the ObjectTooLarge event');
    });
  };
}
