import { timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono, type MiddlewareHandler } from 'hono';
import { errorSummary } from '../common/errors.ts';
import type { Handler } from '../common/http.ts';
import type { Logger } from '../common/log.ts';
import { guardRequest } from './board-guards.ts';
import { shardOfQueue } from '../queue/queues.ts';
export { MIN_SECRET_BYTES } from './board-guards.ts';
import type { BoardAccess, TokenReviewer } from './board-kube-auth.ts';

/**
 * Who may open Bull Board: nobody needs credentials only when it listens on loopback; `kubernetes`: a bearer
 * token of a user the apiserver allows to `get` the configured resource (board-kube-auth.ts).
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
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The credential a request offers: a Bearer token, or HTTP Basic's user and password. */
function offered(header: string | undefined): { bearer: string } | { user: string; password: string } | undefined {
  if (!header) return undefined;
  const [scheme, value = ''] = header.split(' ', 2);
  if (scheme === 'Bearer') return { bearer: value };
  if (scheme !== 'Basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? { user: decoded, password: '' } : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Accepts `Authorization: Bearer <token>`, or Basic with the configured user/password (any user, the token as
 * password, for a token: what a browser's login prompt can send). Kubernetes tokens go to the reviewer.
 */
export async function authorized(header: string | undefined, auth: BoardAuth, reviewer?: TokenReviewer): Promise<boolean> {
  if (auth.kind === 'none') return true;
  const cred = offered(header);
  if (!cred) return false;
  const token = 'bearer' in cred ? cred.bearer : cred.password;
  if (auth.kind === 'basic') return 'user' in cred && same(cred.user, auth.user) && same(cred.password, auth.password);
  if (auth.kind === 'token') return same(token, auth.token);
  if (!reviewer || token === '') return false;
  return reviewer(token, AbortSignal.timeout(30_000));
}

function authMiddleware(opts: BoardOptions): MiddlewareHandler {
  return async (c, next) => {
    let ok: boolean;
    try {
      ok = await authorized(c.req.header('authorization'), opts.auth, opts.reviewer);
    } catch (err) {
      opts.log?.warn({ err: errorSummary(err) }, 'Bull Board: could not review a token');
      return c.text('authentication unavailable\n', 503);
    }
    if (ok) return next();
    c.header('WWW-Authenticate', 'Basic realm="ebb Bull Board", charset="UTF-8"');
    return c.text('authentication required\n', 401);
  };
}

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

/**
 * Bull Board for the given queues, as a node:http handler mounted at `basePath`. Routes match with or without
 * a trailing slash (`/board` and `/board/`, which many ingresses send), and the page is the same either way.
 * Requests pass the origin and Host checks of board-guards.ts first, then authentication. Queue shards past
 * the first are listed as `shard-N.<queue>` (the board needs distinct names).
 */
export function boardHandler(queues: Queue<unknown, unknown, string>[], opts: BoardOptions): Handler {
  const adapter = new QuietHonoAdapter(opts.log);
  adapter.setBasePath(opts.basePath);
  createBullBoard({
    queues: queues.map((q) => {
      const shard = shardOfQueue(q);
      return new BullMQAdapter(q, { readOnlyMode: opts.readOnly, ...(shard > 0 ? { prefix: `shard-${shard}.` } : {}) });
    }),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'ebb queues' } },
  });
  const app = new Hono({ strict: false });
  app.onError((err, c) => {
    opts.log?.warn({ err: errorSummary(err) }, 'Bull Board request failed');
    return c.text('internal error\n', 500);
  });
  app.use(`${opts.basePath}/*`, authMiddleware(opts));
  app.use(opts.basePath, authMiddleware(opts));
  app.route(opts.basePath, adapter.registerPlugin());
  const listener = getRequestListener(app.fetch);
  const loopbackOnly = opts.auth.kind === 'none';
  return (req, res) => {
    const refusal = guardRequest(req.method, req.headers, { loopbackOnly });
    if (!refusal) return listener(req, res);
    res.writeHead(refusal.status, { 'content-type': 'text/plain' });
    res.end(refusal.message);
  };
}
