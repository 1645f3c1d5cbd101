/**
 * The rollouts page's HTTP handler, mounted beside Bull Board on the watcher's listener with the board's own
 * gate (its origin and Host checks, then the same login: `gate`). A viewer the board lets in everywhere sees
 * every namespace; a viewer limited to some namespaces (a NamespaceViewer) sees the Apps of those alone, and
 * any other App's page answers 404, as an App that does not exist.
 *
 * - `<base>/`: the list, from the RolloutStore (no apiserver request);
 * - `<base>/<namespace>/<name>`: one App, read from the apiserver when asked (`AppReader`);
 * - `<base>/-/<file>`: the page's script and styles, and uPlot's.
 *
 * Every page carries an ETag of its body; a request with that ETag in `If-None-Match` is answered 304.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorSummary } from '../../common/errors.ts';
import type { Handler } from '../../common/http.ts';
import type { Logger } from '../../common/log.ts';
import type { BoardViewer } from '../board-kube-auth.ts';
import { asset } from './assets.ts';
import { detailBody, type AppReader } from './detail-page.ts';
import { page } from './html.ts';
import { listBody, parseListQuery } from './list-page.ts';
import type { RolloutStore } from './store.ts';

export interface RolloutsOptions {
  /** Where the page is mounted (`/rollouts`). */
  base: string;
  /** Bull Board's base path, linked from the page's header. */
  boardPath?: string | undefined;
  store: RolloutStore;
  /** The board's checks and login: the viewer's grant, or 'none' once it has answered the request itself. */
  gate: (req: IncomingMessage, res: ServerResponse) => Promise<BoardViewer>;
  /** Reads one App and what its page shows; without it, App pages answer 404. */
  reader?: AppReader | undefined;
  log?: Logger | undefined;
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

function send(req: IncomingMessage, res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string>): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(req.method?.toUpperCase() === 'HEAD' ? undefined : body);
}

const text = (req: IncomingMessage, res: ServerResponse, status: number, message: string): void =>
  send(req, res, status, `${message}\n`, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });

/** An HTML page with its ETag, or 304 when the request already holds it. */
function sendPage(req: IncomingMessage, res: ServerResponse, html: string): void {
  const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
  const headers = { etag, 'cache-control': 'no-cache, private', vary: 'authorization' };
  if (req.headers['if-none-match'] === etag) return send(req, res, 304, '', headers);
  send(req, res, 200, html, { ...headers, 'content-type': 'text/html; charset=utf-8' });
}

/**
 * The namespaces a grant shows: every one, or of `asked` (one namespace, else every namespace of the store) those
 * a limited viewer may see. Each namespace not reviewed lately costs reviews: a page of one namespace asks for one.
 */
async function visible(grant: Exclude<BoardViewer, 'none'>, store: RolloutStore, client: string, asked?: string): Promise<ReadonlySet<string> | 'all'> {
  if (typeof grant !== 'object') return 'all';
  return grant.allowed(asked === undefined ? store.namespaces() : [asked], client);
}

const whoOf = (grant: Exclude<BoardViewer, 'none'>): string =>
  typeof grant === 'object'
    ? 'viewer of some namespaces (read-only)'
    : grant === 'write'
      ? 'viewer of every namespace'
      : 'viewer of every namespace (read-only)';

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** What a path below the base asks for. */
type Route = { kind: 'list' } | { kind: 'asset'; file: string } | { kind: 'app'; namespace: string; name: string } | { kind: 'none' };

export function routeOf(rest: string): Route {
  if (rest === '' || rest === '/') return { kind: 'list' };
  const parts = rest.slice(1).split('/').map(decoded);
  const [first, second, ...more] = parts;
  if (more.length > 0 || first === undefined || second === undefined || second === '') return { kind: 'none' };
  if (first === '-') return { kind: 'asset', file: second };
  return /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(first) && /^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/.test(second)
    ? { kind: 'app', namespace: first, name: second }
    : { kind: 'none' };
}

export function rolloutsHandler(opts: RolloutsOptions): Handler {
  const { base, store } = opts;
  const serve = async (req: IncomingMessage, res: ServerResponse, route: Route, url: URL): Promise<void> => {
    if (route.kind === 'asset') {
      const file = await asset(route.file);
      if (!file) return text(req, res, 404, 'not found');
      return send(req, res, 200, file.body, { 'content-type': file.type, 'cache-control': 'public, max-age=300' });
    }
    if (route.kind === 'none') return text(req, res, 404, 'not found');
    const grant = await opts.gate(req, res);
    if (grant === 'none') return;
    const client = req.socket.remoteAddress ?? '';
    const who = whoOf(grant);
    if (route.kind === 'list') {
      const q = parseListQuery(url.searchParams);
      const body = listBody(base, q, store.list(q, await visible(grant, store, client, q.namespace)));
      return sendPage(req, res, page({ title: 'Rollouts', base, boardPath: opts.boardPath, who, body }));
    }
    const shown = await visible(grant, store, client, route.namespace);
    const allowed = shown === 'all' || shown.has(route.namespace);
    const view = allowed && opts.reader ? await opts.reader(route.namespace, route.name, AbortSignal.timeout(20_000)) : undefined;
    if (!view) return text(req, res, 404, 'no such App');
    const body = detailBody(base, view);
    sendPage(req, res, page({ title: `${route.namespace}/${route.name}`, base, boardPath: opts.boardPath, who, body, chart: true }));
  };
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://rollouts');
    const rest = url.pathname.startsWith(base) ? url.pathname.slice(base.length) : undefined;
    const method = (req.method ?? 'GET').toUpperCase();
    if (rest === undefined || (rest !== '' && !rest.startsWith('/'))) return text(req, res, 404, 'not found');
    if (method !== 'GET' && method !== 'HEAD') return text(req, res, 405, 'method not allowed');
    try {
      await serve(req, res, routeOf(rest), url);
    } catch (err) {
      opts.log?.warn({ err: errorSummary(err) }, 'rollouts page: could not answer');
      if (!res.headersSent) text(req, res, 503, 'unavailable');
    }
  };
}
