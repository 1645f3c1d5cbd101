/**
 * Where a notification goes: the installer's webhook (`EBB_NOTIFY_WEBHOOK_URL`, every namespace's
 * notifications) and, beside it, the webhook a namespace's owner names for that namespace's own: the `url` key
 * of the Secret `ebb-notify` in the namespace, read by the worker when it delivers (RBAC lets it get Secrets of
 * that name only). Each destination is a job of its own, so a receiver that is down delays no other.
 *
 * A namespace's URL is a tenant's: it is reached like the namespace's checks, through the namespace's allowed
 * hosts (`EBB_CHECK_ALLOWED_HOSTS`) and the address rules, never a redirect followed. The installer's URL keeps
 * the address rules only.
 */
import type { OutboundAnswer } from '../egress/client.ts';
import type { Notification } from './notification.ts';

/** The Secret, in each namespace, holding that namespace's webhook. */
export const NAMESPACE_SECRET = 'ebb-notify';
/** Its key holding the URL. */
export const NAMESPACE_SECRET_KEY = 'url';

export type Destination = 'cluster' | 'namespace';

/** What a notification job carries: its destination and the JSON body POSTed there. */
export interface NotifyJob {
  to: Destination;
  body: Notification['body'];
}

/** Pure: the destinations in use. */
export function destinationsOf(targets: NotifyTargets): Destination[] {
  const out: Destination[] = [];
  if (targets.cluster) out.push('cluster');
  if (targets.namespace) out.push('namespace');
  return out;
}

/** Pure: one job per destination, each with an id of its own derived from the occurrence's. */
export function jobsOf(n: Notification, to: readonly Destination[]): { id: string; data: NotifyJob }[] {
  return to.map((d) => ({ id: `${n.id}.${d}`, data: { to: d, body: n.body } }));
}

/** Pure: a job as queued, also one queued before destinations existed (its data is the body itself: the cluster's). */
export function jobOf(data: NotifyJob | Notification['body']): NotifyJob {
  return 'to' in data ? data : { to: 'cluster', body: data };
}

/** A URL a webhook may have: http or https, nothing else. */
export const isWebhookUrl = (text: string): boolean => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol);

/** How a delivery reaches each destination. */
export interface NotifyTargets {
  cluster?: { url: string; post: (url: string, body: string, timeoutMs: number, signal: AbortSignal) => Promise<OutboundAnswer> } | undefined;
  namespace?:
    | {
        /** The namespace's webhook URL; undefined when it names none (no Secret, no key, or the worker may not read it). */
        url(namespace: string, signal: AbortSignal): Promise<string | undefined>;
        post: (namespace: string, url: string, body: string, timeoutMs: number, signal: AbortSignal) => Promise<OutboundAnswer>;
      }
    | undefined;
}
