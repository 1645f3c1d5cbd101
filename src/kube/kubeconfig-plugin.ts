import type { RequestOptions } from 'node:https';
import { dirname } from 'node:path';
import type { KubeConfig as ClientNodeConfig } from '@kubernetes/client-node';
import { KubeConfigError, type Entry } from './kubeconfig-file.ts';
import type { Credentials } from './credentials.ts';
import { errorFirstLine } from '../common/errors.ts';

/**
 * Users with an `exec` credential plugin or an `auth-provider` (oidc, gcp, azure) are authenticated by
 * @kubernetes/client-node. It costs about 50 MiB of memory to load, so it is imported only here and only
 * on first use; every other kubeconfig is read by kubeconfig.ts.
 */

export interface PluginUser {
  context: Entry;
  cluster: Entry;
  user: Entry;
}

/** A one-context kubeconfig for client-node holding just the entries in use, paths made absolute. */
async function clientNodeConfig(p: PluginUser): Promise<ClientNodeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromString(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: p.cluster.name, cluster: p.cluster.fields }],
      users: [{ name: p.user.name, user: p.user.fields }],
      contexts: [{ name: p.context.name, context: { ...p.context.fields, cluster: p.cluster.name, user: p.user.name } }],
      'current-context': p.context.name,
    }),
  );
  kc.makePathsAbsolute(dirname(p.user.file));
  return kc;
}

function headerValues(headers: RequestOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers && !Array.isArray(headers) ? headers : {}))
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

/** Credentials from client-node: the plugin's bearer token (client-node caches it until it expires) and any client certificate. */
export function pluginCredentials(p: PluginUser): () => Promise<Credentials> {
  let kc: Promise<ClientNodeConfig> | undefined;
  return async () => {
    kc ??= clientNodeConfig(p);
    const opts: RequestOptions = {};
    try {
      await (await kc).applyToHTTPSOptions(opts);
    } catch (err) {
      const why = errorFirstLine(err);
      throw new KubeConfigError('Invalid', `user "${p.user.name}" in ${p.user.file}: credential plugin failed: ${why}`);
    }
    const creds: Credentials = { headers: headerValues(opts.headers) };
    if (opts.auth) creds.headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    if (isPem(opts.cert) && isPem(opts.key)) Object.assign(creds, { cert: opts.cert, key: opts.key });
    return creds;
  };
}

function isPem(v: unknown): v is string | Buffer {
  return typeof v === 'string' || Buffer.isBuffer(v);
}
