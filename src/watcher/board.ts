import { timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import type { ExternalJobUrl, QueueJobJson } from '@bull-board/api/typings/app';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { errorSummary } from '../common/errors.ts';
import type { Handler } from '../common/http.ts';
import type { Logger } from '../common/log.ts';
import { offered } from './board-credentials.ts';
import { guardRequest } from './board-guards.ts';
import { shardOfQueue } from '../queue/queues.ts';
export { MIN_SECRET_BYTES } from './board-guards.ts';
import type { BoardAccess, BoardViewer, TokenReviewer } from './board-kube-auth.ts';
import { ReviewRateLimited } from './board-review-limit.ts';
import { scopedBoard, type ReadOnlyBoard } from './board-scoped.ts';
import { appPageLink } from './rollouts/board-links.ts';

/**
 * Who may open Bull Board: nobody needs credentials only when it listens on loopback; `kubernetes`: a bearer
 * token minted for the `ebb-board` audience, of a user the apiserver allows to `get` the configured resource
 * (and to `update` it, to change jobs), or who holds it only in some namespaces and sees only their jobs
 * (board-kube-auth.ts, board-scoped.ts).
 */
export type BoardAuth =
  { kind: 'none' } | { kind: 'token'; token: string } | { kind: 'basic'; user: string; password: string } | { kind: 'kubernetes'; access: BoardAccess };

export interface BoardOptions {
  basePath: string;
  readOnly: boolean;
  auth: BoardAuth;
  /** Reviews bearer tokens; required with `kubernetes` auth. */
  reviewer?: TokenReviewer | undefined;
  log?: Logger | undefined;
  /** Where the rollouts page is mounted: each App's reconcile job links to its page, the header to the list. */
  rolloutsPath?: string | undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * What a request may do: `Authorization: Bearer <token>`, or Basic with the configured user/password (any
 * user, the token as password, for a token: what a browser's login prompt can send). A configured token or
 * password grants everything the board allows; Kubernetes tokens go to the reviewer (`client`: the request's
 * address, for its rate limit).
 */
export async function authorized(header: string | undefined, auth: BoardAuth, reviewer?: TokenReviewer, client = ''): Promise<BoardViewer> {
  if (auth.kind === 'none') return 'write';
  const cred = offered(header);
  if (!cred) return 'none';
  const token = 'bearer' in cred ? cred.bearer : cred.password;
  if (auth.kind === 'basic') return 'user' in cred && same(cred.user, auth.user) && same(cred.password, auth.password) ? 'write' : 'none';
  if (auth.kind === 'token') return same(token, auth.token) ? 'write' : 'none';
  if (!reviewer || token === '') return 'none';
  return reviewer(token, client, AbortSignal.timeout(30_000));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function answer(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers });
  res.end(text);
}

/**
 * The grant of a request, or the answer that ends it: 401 without a credential that opens the board, 429 over
 * the review rate limit, 503 when the apiserver cannot review, 403 for a change without the right to make it.
 */
async function admit(req: IncomingMessage, res: ServerResponse, opts: BoardOptions, jobChanges: boolean): Promise<BoardViewer> {
  let grant: BoardViewer;
  try {
    grant = await authorized(req.headers.authorization, opts.auth, opts.reviewer, req.socket.remoteAddress ?? '');
  } catch (err) {
    if (err instanceof ReviewRateLimited) {
      answer(res, 429, 'too many new tokens; try again later\n', { 'retry-after': String(err.retryAfterS) });
      return 'none';
    }
    opts.log?.warn({ err: errorSummary(err) }, 'Bull Board: could not review a token');
    answer(res, 503, 'authentication unavailable\n');
    return 'none';
  }
  if (grant === 'none') {
    answer(res, 401, 'authentication required\n', { 'www-authenticate': 'Basic realm="ebb Bull Board", charset="UTF-8"' });
    return 'none';
  }
  if (jobChanges && grant === 'read' && !opts.readOnly && !SAFE_METHODS.has((req.method ?? 'GET').toUpperCase())) {
    const what = opts.auth.kind === 'kubernetes' ? ` (it needs update on ${accessName(opts.auth.access)})` : '';
    answer(res, 403, `forbidden: this user may look at the board but not change jobs${what}\n`);
    return 'none';
  }
  return grant;
}

const accessName = (a: BoardAccess): string => `${a.resource}${a.group ? `.${a.group}` : ''}${a.namespace ? ` in namespace ${a.namespace}` : ''}`;

/** Bull Board's own error answer carries the error's message; this one logs it and answers without it. */
class QuietHonoAdapter extends HonoAdapter {
  private readonly log: Logger | undefined;
  constructor(log: Logger | undefined) {
    super(serveStatic);
    this.log = log;
  }

  override setErrorHandler(): this {
    return super.setErrorHandler((err: Error) => {
      this.log?.warn({ err: errorSummary(err) }, 'Bull Board request failed');
      return { status: 500, body: { error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' } } };
    });
  }
}

/** One Bull Board (Hono app) over `queues`, read-only or not, as a node:http listener and a fetch function. */
function oneBoard(queues: Queue<unknown, unknown, string>[], opts: BoardOptions, readOnly: boolean): ReadOnlyBoard {
  const { basePath, log, rolloutsPath } = opts;
  const adapter = new QuietHonoAdapter(log);
  adapter.setBasePath(basePath);
  // Bull Board shows no link for a job whose link is undefined (its answer's `externalUrl` is optional).
  const links = rolloutsPath === undefined ? {} : { externalJobUrl: appPageLink(rolloutsPath) as (job: QueueJobJson) => ExternalJobUrl };
  createBullBoard({
    queues: queues.map((q) => {
      const shard = shardOfQueue(q);
      return new BullMQAdapter(q, { readOnlyMode: readOnly, ...links, ...(shard > 0 ? { prefix: `shard-${shard}.` } : {}) });
    }),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'ebb queues', ...(rolloutsPath === undefined ? {} : { miscLinks: [{ text: 'Rollouts', url: `${rolloutsPath}/` }] }) } },
  });
  const app = new Hono({ strict: false });
  app.onError((err, c) => {
    log?.warn({ err: errorSummary(err) }, 'Bull Board request failed');
    return c.text('internal error\n', 500);
  });
  app.route(basePath, adapter.registerPlugin());
  return { listener: getRequestListener(app.fetch), fetch: (request) => app.fetch(request) };
}

/**
 * Bull Board for the given queues, as a node:http handler mounted at `basePath`. Routes match with or without
 * a trailing slash (`/board` and `/board/`, which many ingresses send), and the page is the same either way.
 * Requests pass the origin and Host checks of board-guards.ts first, then authentication (admit). A board that
 * allows changes is built twice: a user who may only look gets the read-only one, without its buttons. Queue
 * shards past the first are listed as `shard-N.<queue>` (the board needs distinct names). A viewer limited to
 * some namespaces goes through board-scoped.ts, over the read-only board.
 */
export function boardHandler(queues: Queue<unknown, unknown, string>[], opts: BoardOptions): Handler {
  const readOnly = oneBoard(queues, opts, true);
  const writable = opts.readOnly ? readOnly : oneBoard(queues, opts, false);
  const scoped = scopedBoard(readOnly, opts.basePath, opts.log);
  return async (req, res) => {
    const grant = await boardGate(req, res, opts);
    if (grant === 'none') return;
    if (typeof grant === 'object') return scoped(req, res, grant);
    return (grant === 'write' ? writable : readOnly).listener(req, res);
  };
}

/**
 * The board's checks and login for a request (its origin and Host checks, then `admit`): the viewer's grant, or
 * 'none' once the request is answered. The rollouts page beside the board lets viewers in through it too, with
 * `jobChanges` false: its changes are reviewed by the page itself (a viewer's right on the App, not on the board).
 */
export async function boardGate(req: IncomingMessage, res: ServerResponse, opts: BoardOptions, jobChanges = true): Promise<BoardViewer> {
  const refusal = guardRequest(req.method, req.headers, { loopbackOnly: opts.auth.kind === 'none' });
  if (refusal) {
    answer(res, refusal.status, refusal.message);
    return 'none';
  }
  return admit(req, res, opts, jobChanges);
}
