/** The worker's notification destinations, from its settings: the installer's webhook, and each namespace's Secret. */
import { isKubeError } from '../../kube/errors.ts';
import { core } from '../../kube/paths.ts';
import type { KubeRest } from '../../kube/rest.ts';
import type { WorkerConfig } from '../config.ts';
import { checkHttp, webhookHttp } from '../egress/outbound.ts';
import { NAMESPACE_SECRET, NAMESPACE_SECRET_KEY, type NotifyTargets } from './destinations.ts';
import { SECRET_CACHE_LIMITS, cachedUrlReader } from './secret-cache.ts';

/**
 * The namespace's webhook URL from its Secret; undefined when there is none, it has no `url`, or the worker may
 * not read it (an install without that grant sends to the installer's webhook only).
 */
async function namespaceUrl(rest: KubeRest, namespace: string, signal: AbortSignal): Promise<string | undefined> {
  try {
    const secret = await rest.get<{ data?: Record<string, string> }>(core('secrets', namespace, NAMESPACE_SECRET), signal);
    const data = secret.data?.[NAMESPACE_SECRET_KEY];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8').trim();
  } catch (err) {
    if (isKubeError(err, 'NotFound', 'Forbidden')) return undefined;
    throw err;
  }
}

export function notifyTargets(cfg: WorkerConfig, rest: KubeRest): NotifyTargets {
  const clusterUrl = cfg.notifyWebhookUrl;
  const post = webhookHttp(cfg.egress.networks);
  const tenant = checkHttp(cfg.egress);
  const url = cachedUrlReader((namespace, signal) => namespaceUrl(rest, namespace, signal), { ttlMs: cfg.notifySecretCacheMs, ...SECRET_CACHE_LIMITS });
  return {
    cluster: clusterUrl === undefined ? undefined : { url: clusterUrl, post },
    namespace: cfg.notifyNamespaceWebhooks
      ? {
          url,
          post: (namespace, target, body, timeoutMs, signal) =>
            tenant(namespace, { url: target, method: 'POST', headers: { 'content-type': 'application/json' }, body, timeoutMs }, signal),
        }
      : undefined,
  };
}
