/** What every Event a worker writes says of its writer and its time: the App's Events and the ImagePullJob's alike. */
import { hostname } from 'node:os';

/** MicroTime as the apiserver wants it for events.k8s.io `eventTime`: RFC 3339 with microseconds. */
export function microTime(now: Date): string {
  return now.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function reportingInstance(): string {
  return `ebb-worker-${hostname()}`.slice(0, 128);
}
