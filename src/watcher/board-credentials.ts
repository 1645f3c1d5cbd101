/** The credential a request to Bull Board or the rollouts page offers, from its `Authorization` header. */

/** A Bearer token, or HTTP Basic's user and password. */
export function offered(header: string | undefined): { bearer: string } | { user: string; password: string } | undefined {
  if (!header) return undefined;
  const [scheme, value = ''] = header.split(' ', 2);
  if (scheme === 'Bearer') return { bearer: value };
  if (scheme !== 'Basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? { user: decoded, password: '' } : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The token a request offers: the Bearer token, or Basic's password (what a browser's login prompt can send). */
export function offeredToken(header: string | undefined): string | undefined {
  const cred = offered(header);
  if (!cred) return undefined;
  return 'bearer' in cred ? cred.bearer : cred.password;
}
