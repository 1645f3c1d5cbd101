/**
 * The rollouts page's actions over HTTP (the ops server, a fake gate, authority and apiserver): who is offered
 * and allowed what, and that a refused or forged request writes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../api/app.ts';
import { RolloutAnnotation } from '../../api/rollout-abort.ts';
import type { Stored } from '../../kube/types.ts';
import { serveMount } from '../../../harness/ops-mount.ts';
import { rolling } from '../../../test/unit/watcher/rollout-actions-fixture.ts';
import type { ReviewedUser } from '../board-sar.ts';
import { ActionLimit, type ActionAuthority } from './action-auth.ts';
import type { AppWriter } from './action-run.ts';
import type { AppView } from './detail-model.ts';
import { explain } from '../../cli/rollout/explain/explain.ts';
import { rolloutsHandler } from './handler.ts';
import { RolloutStore } from './store.ts';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

interface Viewer {
  /** The user the login names (undefined: a login that names nobody). */
  user: ReviewedUser | undefined;
  /** May patch the App. */
  may: boolean;
}

async function serve(viewer: Viewer, limit = new ActionLimit()) {
  const patches: unknown[] = [];
  const events: Record<string, unknown>[] = [];
  const reviews: boolean[] = [];
  const app = (): Stored<App> => rolling() as Stored<App>;
  const writer: AppWriter = {
    get: () => Promise.resolve(app()),
    patch: (_ns, _name, patch) => {
      patches.push(patch);
      return Promise.resolve();
    },
    createEvent: (_ns, body) => {
      events.push(body);
      return Promise.resolve();
    },
  };
  const authority: ActionAuthority = {
    who: () => viewer.user,
    mayPatch: (_u, _ns, _name, fresh) => {
      reviews.push(fresh);
      return Promise.resolve(viewer.may);
    },
  };
  const view = (): AppView => {
    const a = app();
    const explanation = explain({ app: a, pods: [], imageLists: [], plan: undefined, queue: undefined, notes: [], now: new Date() });
    return { app: a, pods: [], events: [], explanation, explainText: '', notes: [], at: '' };
  };
  const handler = rolloutsHandler({
    base: '/rollouts',
    store: new RolloutStore(),
    gate: () => Promise.resolve('read'),
    reader: () => Promise.resolve(view()),
    actions: { authority, limit, deps: { writer, instance: 'test' } },
  });
  const server = await serveMount('/rollouts', handler);
  closers.push(server.close);
  return { url: `${server.url}/rollouts/shop/web`, patches, events, reviews };
}

const form = (revision: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ revision }).toString(),
});

const alice: ReviewedUser = { username: 'alice', groups: ['system:authenticated'] };

describe('actions on the rollouts page', () => {
  it('offers an allowed viewer the actions that would write, confirms, then writes what the CLI writes', async () => {
    const s = await serve({ user: alice, may: true });
    const pageHtml = await (await fetch(s.url)).text();
    expect(pageHtml).toContain('href="/rollouts/shop/web/abort"');
    expect(pageHtml).not.toContain('/rollouts/shop/web/retry');
    const confirm = await fetch(`${s.url}/abort`);
    expect(confirm.status).toBe(200);
    const confirmHtml = await confirm.text();
    expect(confirmHtml).toContain('<form method="post" action="/rollouts/shop/web/abort">');
    expect(confirmHtml).toContain('name="revision" value="r2"');
    expect(s.patches).toEqual([]);
    const done = await fetch(`${s.url}/abort`, form('r2'));
    expect(done.status).toBe(200);
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(await done.text()).toContain('Done: rollout of revision r2 aborted');
    expect(s.patches).toEqual([{ metadata: { resourceVersion: '5', annotations: { [RolloutAnnotation.abort]: 'r2' } } }]);
    expect(s.events[0]).toMatchObject({ note: 'abort requested by alice from the rollouts page' });
    expect(s.reviews.at(-1)).toBe(true);
  });

  it('refuses a viewer who may not patch the App: no button, a 403 page, and a forged POST writes nothing', async () => {
    const s = await serve({ user: alice, may: false });
    expect(await (await fetch(s.url)).text()).not.toContain('class="actions"');
    expect((await fetch(`${s.url}/abort`)).status).toBe(403);
    const forged = await fetch(`${s.url}/abort`, form('r2'));
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('alice may not change this App: it needs patch on apps.apps.ebb.dev in namespace shop');
    expect(s.patches).toEqual([]);
    expect(s.events).toEqual([]);
  });

  it('refuses a login that names nobody, whatever it may do on the board', async () => {
    const s = await serve({ user: undefined, may: true });
    expect(await (await fetch(s.url)).text()).not.toContain('class="actions"');
    expect((await fetch(`${s.url}/abort`, form('r2'))).status).toBe(403);
    expect(s.patches).toEqual([]);
  });

  it('writes nothing for a rollout other than the one confirmed, nor for a body that is not the form', async () => {
    const s = await serve({ user: alice, may: true });
    expect((await fetch(`${s.url}/abort`, form('r9'))).status).toBe(409);
    expect((await fetch(`${s.url}/abort`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(400);
    expect((await fetch(`${s.url}/abort`, { method: 'PUT', body: 'revision=r2' })).status).toBe(405);
    expect((await fetch(`${s.url}/delete`, form('r2'))).status).toBe(405);
    expect(s.patches).toEqual([]);
  });

  it('limits the actions of one viewer', async () => {
    const s = await serve({ user: alice, may: true }, new ActionLimit(Date.now, 2));
    expect((await fetch(`${s.url}/pause`, form('r2'))).status).toBe(200);
    expect((await fetch(`${s.url}/pause`, form('r2'))).status).toBe(200);
    expect((await fetch(`${s.url}/pause`, form('r2'))).status).toBe(429);
    expect(s.patches).toHaveLength(2);
  });
});
