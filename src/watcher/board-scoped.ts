/**
 * Bull Board for a viewer limited to some namespaces (a NamespaceViewer), enforced at the server: every request
 * is judged by its route (board-scope.ts) before the board answers it, and answers that carry jobs are filtered.
 *
 * - the page, its assets and reads of queue numbers and settings: answered by the read-only board;
 * - the queue list: only the jobs of namespaces the viewer may see (counts and pages stay the queue's numbers);
 * - one job, its logs: 404 (as for a job that does not exist, so names do not leak) unless its id and payload name
 *   a namespace the viewer may see; a change to such a job: 403 (a limited viewer only looks);
 * - anything else (clean, pause, retry or promote all, empty, schedulers, flows, unknown paths): 403, it needs
 *   the board's permission cluster-wide.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorSummary } from '../common/errors.ts';
import type { Handler } from '../common/http.ts';
import type { Logger } from '../common/log.ts';
import type { NamespaceViewer } from './board-namespaces.ts';
import { answerNamespaces, classifyRoute, filterQueuesAnswer, idNamespace, jobAnswerAllowed, type BoardRoute } from './board-scope.ts';

/** The read-only board twice: as a node:http listener, and as a fetch function whose answers can be read. */
export interface ReadOnlyBoard {
  listener: Handler;
  fetch: (request: Request) => Response | Promise<Response>;
}

const JOB_NOT_FOUND = JSON.stringify({ error: { key: 'ERRORS.JOB_NOT_FOUND' } });

function send(req: IncomingMessage, res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(req.method?.toUpperCase() === 'HEAD' ? undefined : body);
}

const refuse = (req: IncomingMessage, res: ServerResponse, text: string): void => send(req, res, 403, `forbidden: ${text}\n`, 'text/plain');

/** The board's own answer to GET `path` (below the base path). */
async function boardGet(board: ReadOnlyBoard, basePath: string, path: string, req: IncomingMessage): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = {};
  const lang = req.headers['accept-language'];
  if (typeof lang === 'string') headers['accept-language'] = lang;
  const answer = await board.fetch(new Request(`http://board${basePath}${path}`, { method: 'GET', headers }));
  const text = await answer.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: answer.status, body };
}

/** One request of a limited viewer to the board mounted at `basePath`. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  viewer: NamespaceViewer;
}

async function queues(board: ReadOnlyBoard, basePath: string, search: string, { req, res, viewer }: Exchange): Promise<void> {
  const answer = await boardGet(board, basePath, `/api/queues${search}`, req);
  if (answer.status !== 200) return send(req, res, answer.status, JSON.stringify(answer.body ?? {}));
  const allowed = await viewer.allowed(answerNamespaces(answer.body), req.socket.remoteAddress ?? '');
  send(req, res, 200, JSON.stringify(filterQueuesAnswer(answer.body, allowed)));
}

async function job(board: ReadOnlyBoard, basePath: string, route: Extract<BoardRoute, { kind: 'job' }>, { req, res, viewer }: Exchange): Promise<void> {
  const ns = idNamespace(route.jobId);
  const allowed = ns === undefined ? new Set<string>() : await viewer.allowed([ns], req.socket.remoteAddress ?? '');
  if (ns === undefined || !allowed.has(ns)) return send(req, res, 404, JOB_NOT_FOUND);
  const path = `/api/queues/${encodeURIComponent(route.queue)}/${encodeURIComponent(route.jobId)}`;
  const detail = await boardGet(board, basePath, path, req);
  if (detail.status !== 200 || !jobAnswerAllowed(detail.body, allowed)) return send(req, res, 404, JOB_NOT_FOUND);
  if (route.action === 'change') return refuse(req, res, 'a viewer limited to some namespaces may look at their jobs but not change them');
  if (route.action === 'read') return send(req, res, 200, JSON.stringify(detail.body));
  const logs = await boardGet(board, basePath, `${path}/logs`, req);
  send(req, res, logs.status, JSON.stringify(logs.body ?? []));
}

/** The handler for limited viewers of the board mounted at `basePath`. */
export function scopedBoard(board: ReadOnlyBoard, basePath: string, log: Logger | undefined) {
  return async (req: IncomingMessage, res: ServerResponse, viewer: NamespaceViewer): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://board');
    const rest = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) : undefined;
    if (rest === undefined || (rest !== '' && !rest.startsWith('/'))) return send(req, res, 404, JOB_NOT_FOUND);
    const route = classifyRoute(req.method ?? 'GET', rest);
    try {
      switch (route.kind) {
        case 'page':
        case 'harmless':
          return await board.listener(req, res);
        case 'queues':
          return await queues(board, basePath, url.search, { req, res, viewer });
        case 'job':
          return await job(board, basePath, route, { req, res, viewer });
        case 'queueWide':
          return refuse(req, res, "this needs the board's permission in every namespace");
      }
    } catch (err) {
      log?.warn({ err: errorSummary(err) }, 'Bull Board: could not answer a limited viewer');
      if (!res.headersSent) send(req, res, 503, 'unavailable\n', 'text/plain');
    }
  };
}
