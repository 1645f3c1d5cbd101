import { timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono, type MiddlewareHandler } from 'hono';
import type { Handler } from '../common/http.ts';

/** Who may open Bull Board: nobody needs credentials only when it listens on loopback. */
export type BoardAuth = { kind: 'none' } | { kind: 'token'; token: string } | { kind: 'basic'; user: string; password: string };

export interface BoardOptions {
  basePath: string;
  readOnly: boolean;
  auth: BoardAuth;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Accepts `Authorization: Bearer <token>`, or Basic with the configured user/password (any user for a token). */
export function authorized(header: string | undefined, auth: BoardAuth): boolean {
  if (auth.kind === 'none') return true;
  if (!header) return false;
  const [scheme, value = ''] = header.split(' ', 2);
  if (auth.kind === 'token' && scheme === 'Bearer') return same(value, auth.token);
  if (scheme !== 'Basic') return false;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const [user, password] = colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
  return auth.kind === 'token' ? same(password, auth.token) : same(user, auth.user) && same(password, auth.password);
}

function authMiddleware(auth: BoardAuth): MiddlewareHandler {
  return async (c, next) => {
    if (authorized(c.req.header('authorization'), auth)) return next();
    c.header('WWW-Authenticate', 'Basic realm="ebb Bull Board", charset="UTF-8"');
    return c.text('authentication required\n', 401);
  };
}

/**
 * Bull Board for the given queues, as a node:http handler mounted at `basePath`. Routes match with or without
 * a trailing slash (`/board` and `/board/`, which many ingresses send), and the page is the same either way.
 */
export function boardHandler(queues: Queue<unknown, unknown, string>[], opts: BoardOptions): Handler {
  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(opts.basePath);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: opts.readOnly })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'ebb queues' } },
  });
  const app = new Hono({ strict: false });
  app.use(`${opts.basePath}/*`, authMiddleware(opts.auth));
  app.use(opts.basePath, authMiddleware(opts.auth));
  app.route(opts.basePath, adapter.registerPlugin());
  return getRequestListener(app.fetch);
}
