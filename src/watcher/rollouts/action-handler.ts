/**
 * The rollouts page's actions over HTTP, below an App's page: `<base>/<namespace>/<name>/<action>`.
 * - GET: the confirm step (what the action does, on which revision), a POST form;
 * - POST (a form, from the page's own origin: the board's gate refuses a change from another origin before
 *   anything else): rate limited per viewer, reviewed afresh (`patch` on that App), written (action-run.ts),
 *   audit-logged, and answered with what was written or why nothing was.
 * A viewer whose login names nobody, or whose identity may not patch the App, gets a 403 page and no write.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorSummary } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import { isKubeError } from '../../kube/errors.ts';
import { BOARD_AUDIENCE } from '../board-kube-auth.ts';
import type { ReviewedUser } from '../board-sar.ts';
import type { ActionAuthority, ActionLimit } from './action-auth.ts';
import { confirmBody, outcomeBody, refusedBody } from './action-page.ts';
import { runAction, type ActionDeps, type ActionOutcome } from './action-run.ts';
import { planAction, type RolloutAction } from './actions.ts';
import { page } from './html.ts';
import { sendOnce } from './respond.ts';

export interface ActionOptions {
  authority: ActionAuthority;
  limit: ActionLimit;
  deps: ActionDeps;
}

/** What the page around an action's answer needs. */
export interface ActionPageContext {
  base: string;
  boardPath: string | undefined;
  who: string;
  log?: Logger | undefined;
}

export interface ActionRoute {
  namespace: string;
  name: string;
  op: RolloutAction;
}

/** The largest form body read. */
const MAX_BODY_BYTES = 4096;

async function formOf(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const STATUS_OF: Record<ActionOutcome['kind'], number> = { done: 200, skip: 409, refuse: 409, changed: 409, gone: 404 };

export async function serveAction(
  ctx: ActionPageContext,
  actions: ActionOptions | undefined,
  route: ActionRoute,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { namespace, name, op } = route;
  const answer = (status: number, body: Parameters<typeof page>[0]['body']): void =>
    sendOnce(req, res, status, page({ title: `${op} ${namespace}/${name}`, base: ctx.base, boardPath: ctx.boardPath, who: ctx.who, body }));
  const user = actions?.authority.who(req);
  if (!actions || !user?.username)
    return answer(403, refusedBody(ctx.base, namespace, name, op, `Actions need a Kubernetes login: a token minted for the ${BOARD_AUDIENCE} audience.`));
  const audit = (outcome: string, extra: Record<string, unknown> = {}): void =>
    ctx.log?.info(
      { audit: 'rollouts-action', user: user.username, groups: user.groups, namespace, name, action: op, outcome, ...extra },
      'rollouts page: action',
    );
  const post = req.method?.toUpperCase() === 'POST';
  if (post && !actions.limit.take(user.username)) {
    audit('rate-limited');
    return answer(429, refusedBody(ctx.base, namespace, name, op, 'Too many actions: try again in a minute.'));
  }
  if (!(await actions.authority.mayPatch(user, namespace, name, post, AbortSignal.timeout(20_000)))) {
    if (post) audit('forbidden');
    return answer(403, refusedBody(ctx.base, namespace, name, op, forbidden(user, namespace)));
  }
  if (!post) return confirm(ctx, actions, route, answer);
  const form = await formOf(req);
  if (!form) return answer(400, refusedBody(ctx.base, namespace, name, op, 'The request is not the confirm form.'));
  let outcome: ActionOutcome;
  try {
    outcome = await runAction(actions.deps, { namespace, name, op, user: user.username, revision: form.get('revision') ?? '' }, AbortSignal.timeout(20_000));
  } catch (err) {
    audit('failed', { err: errorSummary(err) });
    throw err;
  }
  audit(outcome.kind, outcome.kind === 'gone' ? {} : { message: outcome.message });
  answer(STATUS_OF[outcome.kind], outcomeBody(ctx.base, namespace, name, op, outcome));
}

const forbidden = (user: ReviewedUser, namespace: string): string =>
  `${user.username ?? ''} may not change this App: it needs patch on apps.apps.ebb.dev in namespace ${namespace}.`;

async function confirm(
  ctx: ActionPageContext,
  actions: ActionOptions,
  { namespace, name, op }: ActionRoute,
  answer: (status: number, body: Parameters<typeof page>[0]['body']) => void,
): Promise<void> {
  let app;
  try {
    app = await actions.deps.writer.get(namespace, name, AbortSignal.timeout(20_000));
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return answer(404, outcomeBody(ctx.base, namespace, name, op, { kind: 'gone' }));
    throw err;
  }
  const plan = planAction(op, app, new Date());
  if (plan.kind !== 'patch') return answer(409, outcomeBody(ctx.base, namespace, name, op, plan));
  answer(200, confirmBody(ctx.base, app, op));
}
