/**
 * The connector of tenant-directed requests: resolves the host, judges every address it resolves to, and
 * connects to the address it judged (pinned: a second resolution, as DNS rebinding would answer, is never made).
 * A name with any refused address is refused whole, so no order of attempts can reach the refused one.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { addressRefusal, type NetworkScope } from './addresses.ts';
import { EgressError } from './errors.ts';

/** Every address a host name resolves to. */
export type Resolve = (host: string) => Promise<string[]>;

export const systemResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The addresses `host` stands for (itself when an IP), or a refusal naming the setting. */
export async function judgedAddress(host: string, scope: NetworkScope, resolve: Resolve): Promise<string> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  const literal = isIP(bare) !== 0;
  let addresses: string[];
  if (literal) addresses = [bare];
  else {
    try {
      addresses = await resolve(bare);
    } catch (err) {
      const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
      throw new EgressError('ConnectFailed', `${host} could not be resolved${typeof code === 'string' ? ` (${code})` : ''}`);
    }
  }
  const [first] = addresses;
  if (first === undefined) throw new EgressError('ConnectFailed', `${host} resolves to no address`);
  for (const a of addresses) {
    const why = addressRefusal(a, scope);
    if (why !== undefined)
      throw new EgressError('AddressRefused', `${host} ${literal ? 'is' : 'resolves to'} ${why}, which may not be called (EBB_CHECK_NETWORKS=${scope})`);
  }
  return first;
}

/** An undici connector that dials only addresses `scope` allows. */
export function guardedConnector(scope: NetworkScope, resolve: Resolve, timeoutMs: number): buildConnector.connector {
  const base = buildConnector({ timeout: timeoutMs, allowH2: false });
  return (options, callback) => {
    judgedAddress(options.hostname, scope, resolve).then(
      // `host` keeps the name: TLS verifies the certificate against it (SNI), and the Host header is the URL's.
      (address) => base({ ...options, hostname: address }, callback),
      (err: unknown) => callback(err instanceof Error ? err : new EgressError('ConnectFailed', 'connection failed'), null),
    );
  };
}
