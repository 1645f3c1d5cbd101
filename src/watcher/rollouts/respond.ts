/** The rollouts page's answers: its security headers on each, HTML pages with an ETag (304 when the request holds it). */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export function send(req: IncomingMessage, res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string>): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(req.method?.toUpperCase() === 'HEAD' ? undefined : body);
}

export const text = (req: IncomingMessage, res: ServerResponse, status: number, message: string): void =>
  send(req, res, status, `${message}\n`, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });

/** An HTML page with its ETag, or 304 when the request already holds it. */
export function sendPage(req: IncomingMessage, res: ServerResponse, html: string): void {
  const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
  const headers = { etag, 'cache-control': 'no-cache, private', vary: 'authorization' };
  if (req.headers['if-none-match'] === etag) return send(req, res, 304, '', headers);
  send(req, res, 200, html, { ...headers, 'content-type': 'text/html; charset=utf-8' });
}

/** An HTML page that is an answer to one request (an action's): never cached, no ETag. */
export function sendOnce(req: IncomingMessage, res: ServerResponse, status: number, html: string): void {
  send(req, res, status, html, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
}
