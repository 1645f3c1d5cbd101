/**
 * The rollouts page's HTTP handler, mounted beside Bull Board on the watcher's listener with the board's own
 * gate (its origin and Host checks, then the same login: `gate`). A viewer the board lets in everywhere sees
 * every namespace; a viewer limited to some namespaces (a NamespaceViewer) sees the Apps of those alone, and
 * any other App's page answers 404, as an App that does not exist.
 *
 * - `<base>/`: the list, from the RolloutStore (no apiserver request);
 * - `<base>/<namespace>/<name>`: one App, read from the apiserver when asked (`AppReader`);
 * - `<base>/<namespace>/<name>/<action>`: an action on the App (pause, resume, abort, retry, promote, restart),
 *   GET its confirm step, POST to write it, for a viewer whose identity may patch the App (action-handler.ts);
 * - `<base>/-/<file>`: the page's script and styles, and uPlot's.
 *
 * Every page carries an ETag of its body; a request with that ETag in `If-None-Match` is answered 304.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorSummary } from '../../common/errors.ts';
import type { Handler } from '../../common/http.ts';
import type { Logger } from '../../common/log.ts';
import type { BoardViewer } from '../board-kube-auth.ts';
import type { App } from '../../api/app.ts';
import { serveAction, type ActionOptions, type ActionRoute } from './action-handler.ts';
import { actionsFor, isAction, type RolloutAction } from './actions.ts';
import { asset } from './assets.ts';
import { detailBody, type AppReader } from './detail-page.ts';
import { page } from './html.ts';
import { send, sendPage, text } from './respond.ts';
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
  /** Who may act on an App and how actions are written; without it, no action is offered or allowed. */
  actions?: ActionOptions | undefined;
  log?: Logger | undefined;
}

/**
 * The namespaces a grant shows: every one, or of `asked` (one namespace, else every namespace of the store) those
 * a limited viewer may see. Each namespace not reviewed lately costs reviews: a page of one namespace asks for one.
 */
async function visible(grant: Exclude<BoardViewer, 'none'>, store: RolloutStore, client: string, asked?: string): Promise<ReadonlySet<string> | 'all'> {
  if (typeof grant !== 'object') return 'all';
  return grant.allowed(asked === undefined ? store.namespaces() : [asked], client);
}

/** Who is looking, as the header names them: the user a Kubernetes login names, and what they see. */
function whoOf(grant: Exclude<BoardViewer, 'none'>, user: string | undefined): string {
  const sees = typeof grant === 'object' ? 'some namespaces' : 'every namespace';
  if (user !== undefined) return `${user} (${sees})`;
  return `viewer of ${sees}${grant === 'write' ? '' : ' (read-only)'}`;
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** What a path below the base asks for. */
type Route =
  { kind: 'list' } | { kind: 'asset'; file: string } | { kind: 'app'; namespace: string; name: string } | ({ kind: 'action' } & ActionRoute) | { kind: 'none' };

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME = /^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/;

export function routeOf(rest: string): Route {
  if (rest === '' || rest === '/') return { kind: 'list' };
  const parts = rest.slice(1).split('/').map(decoded);
  const [first, second, third, ...more] = parts;
  if (more.length > 0 || first === undefined || second === undefined || second === '') return { kind: 'none' };
  if (first === '-') return third === undefined ? { kind: 'asset', file: second } : { kind: 'none' };
  if (!NAMESPACE.test(first) || !NAME.test(second)) return { kind: 'none' };
  if (third === undefined) return { kind: 'app', namespace: first, name: second };
  return isAction(third) ? { kind: 'action', namespace: first, name: second, op: third } : { kind: 'none' };
}

/** The actions `req`'s viewer may take on `app` now: none unless their identity may patch it. */
async function offered(actions: ActionOptions | undefined, req: IncomingMessage, app: App): Promise<RolloutAction[]> {
  const user = actions?.authority.who(req);
  if (!actions || !user) return [];
  const may = await actions.authority.mayPatch(user, app.metadata.namespace ?? '', app.metadata.name ?? '', false, AbortSignal.timeout(20_000));
  return may ? actionsFor(app, new Date()) : [];
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
    const who = whoOf(grant, opts.actions?.authority.who(req)?.username);
    if (route.kind === 'list') {
      const q = parseListQuery(url.searchParams);
      const body = listBody(base, q, store.list(q, await visible(grant, store, client, q.namespace)));
      return sendPage(req, res, page({ title: 'Rollouts', base, boardPath: opts.boardPath, who, body }));
    }
    const shown = await visible(grant, store, client, route.namespace);
    if (shown !== 'all' && !shown.has(route.namespace)) return text(req, res, 404, 'no such App');
    if (route.kind === 'action') return serveAction({ base, boardPath: opts.boardPath, who, log: opts.log }, opts.actions, route, req, res);
    const view = opts.reader ? await opts.reader(route.namespace, route.name, AbortSignal.timeout(20_000)) : undefined;
    if (!view) return text(req, res, 404, 'no such App');
    const body = detailBody(base, view, await offered(opts.actions, req, view.app));
    sendPage(req, res, page({ title: `${route.namespace}/${route.name}`, base, boardPath: opts.boardPath, who, body, chart: true }));
  };
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://rollouts');
    const rest = url.pathname.startsWith(base) ? url.pathname.slice(base.length) : undefined;
    const method = (req.method ?? 'GET').toUpperCase();
    if (rest === undefined || (rest !== '' && !rest.startsWith('/'))) return text(req, res, 404, 'not found');
    const route = routeOf(rest);
    if (method !== 'GET' && method !== 'HEAD' && !(method === 'POST' && route.kind === 'action')) return text(req, res, 405, 'method not allowed');
    try {
      await serve(req, res, route, url);
    } catch (err) {
      opts.log?.warn({ err: errorSummary(err) }, 'rollouts page: could not answer');
      if (!res.headersSent) text(req, res, 503, 'unavailable');
    }
  };
}
