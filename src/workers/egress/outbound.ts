/**
 * The worker's tenant-directed HTTP: web and Prometheus checks (`checkHttp`: the namespace's allowed hosts,
 * then the address rules) and notification deliveries (`webhookHttp`: the installer's URL, the address rules).
 * Both go through one connection pool whose connector judges every address it dials (`connector.ts`) and read
 * answers with a byte cap (`client.ts`).
 */
import { Agent, type Dispatcher } from 'undici';
import type { NetworkScope } from './addresses.ts';
import { hostAllowed, type AllowEntry } from './allowlist.ts';
import { boundedRequest, type OutboundAnswer } from './client.ts';
import { guardedConnector, systemResolve, type Resolve } from './connector.ts';
import { EgressError } from './errors.ts';

/** The most bytes of a check's answer read. */
export const MAX_CHECK_ANSWER_BYTES = 1 << 20;
/** The most bytes of a notification receiver's answer read (it is only checked for its status). */
export const MAX_WEBHOOK_ANSWER_BYTES = 64 << 10;

export interface EgressPolicy {
  /** Hosts each namespace's checks may call (`EBB_CHECK_ALLOWED_HOSTS`). */
  readonly allowedHosts: readonly AllowEntry[];
  /** Address ranges requests may reach (`EBB_CHECK_NETWORKS`). */
  readonly networks: NetworkScope;
}

export interface CheckRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  body?: string | undefined;
  timeoutMs: number;
}

/** A check's request on behalf of `namespace`; throws EgressError. */
export type CheckHttp = (namespace: string, req: CheckRequest, signal: AbortSignal) => Promise<OutboundAnswer>;

/** POSTs a JSON body to the notification webhook; throws EgressError. */
export type WebhookHttp = (url: string, body: string, timeoutMs: number, signal: AbortSignal) => Promise<OutboundAnswer>;

const CONNECT_TIMEOUT_MS = 10_000;

function guardedAgent(networks: NetworkScope, resolve: Resolve): Dispatcher {
  return new Agent({ connect: guardedConnector(networks, resolve, CONNECT_TIMEOUT_MS), connections: 8, keepAliveTimeout: 4_000, pipelining: 1 });
}

function urlOf(text: string): URL {
  if (!URL.canParse(text)) throw new EgressError('BadUrl', 'not a URL');
  return new URL(text);
}

export function checkHttp(policy: EgressPolicy, resolve: Resolve = systemResolve): CheckHttp {
  const agent = guardedAgent(policy.networks, resolve);
  return async (namespace, req, signal) => {
    const url = urlOf(req.url);
    if (!hostAllowed(policy.allowedHosts, namespace, url))
      throw new EgressError(
        'HostNotAllowed',
        `${url.host} is not an allowed check host for namespace ${namespace} (the worker setting EBB_CHECK_ALLOWED_HOSTS lists them)`,
      );
    return boundedRequest(agent, { ...req, url, maxBytes: MAX_CHECK_ANSWER_BYTES, signal });
  };
}

export function webhookHttp(networks: NetworkScope, resolve: Resolve = systemResolve): WebhookHttp {
  const agent = guardedAgent(networks, resolve);
  return (url, body, timeoutMs, signal) =>
    boundedRequest(agent, {
      url: urlOf(url),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      maxBytes: MAX_WEBHOOK_ANSWER_BYTES,
      timeoutMs,
      signal,
    });
}
