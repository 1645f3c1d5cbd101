/**
 * The rollouts page's actions in headless Chromium, on a real sandbox (a real `ebb watcher` with Kubernetes
 * logins and a real worker): an App's canary holds at a pause step;
 * - a viewer who may read Apps but not patch them sees no action, is refused the confirm step (403), and a
 *   POST forged from the page's own origin is refused too, with nothing written;
 * - a viewer a RoleBinding allows to patch Apps aborts the rollout from the page (link, confirm, button): the
 *   App goes back to its stable revision, and an ActionRequested Event on it names the viewer.
 * Screenshots go to test-results/rollouts-page/.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApp, eventsOf, getApp, patchApp, revisionOf, settled, template, until } from '../app/harness.ts';
import { APP_READ_RULE, boardViewer } from './board-viewers.ts';
import { browserPage, shot, shows } from './chromium.ts';
import { deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const APP_PATCH_RULE = { apiGroups: ['apps.ebb.dev'], resources: ['apps'], verbs: ['patch'] };

describe('actions on the rollouts page in Chromium', () => {
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('lets a viewer who may patch the App abort its rollout, and refuses a read-only viewer', async () => {
    printLogsOnFailure(procs);
    const { rest, kubeconfig, redisUrl } = sandbox();
    const ns = await freshNamespace('page-act');
    cleanups.push(() => deleteNamespace(rest, ns));
    const reader = await boardViewer(rest, { namespace: ns, name: 'reader', rules: [APP_READ_RULE] }, cleanups);
    const operator = await boardViewer(rest, { namespace: ns, name: 'operator', rules: [APP_READ_RULE, APP_PATCH_RULE] }, cleanups);

    const env = ebbEnv(
      { kubeconfig, redisUrl, prefix: uniquePrefix('page-act'), namespaces: [ns] },
      { EBB_BOARD: 'true', EBB_HTTP_ADDRESS: '0.0.0.0', EBB_SCALER: 'false', EBB_BOARD_KUBE_AUTH_RESOURCE: 'apps.apps.ebb.dev' },
    );
    const watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    procs.push(spawnEbb('worker', { ...env, EBB_BOARD: 'false' }));
    const origin = `http://127.0.0.1:${await watcher.httpPort(120_000)}`;

    // A canary that holds at its pause step, one pod at the update revision.
    const web = 'storefront';
    await createApp(ns, web, {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      template: template(web, 'v1'),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps: [{ replicas: 1 }, { pause: {} }] } } },
    });
    const stable = (await settled(ns, web, undefined, 90_000)).app.status?.currentRevision ?? '';
    await patchApp(ns, web, { template: template(web, 'v2') });
    const held = await until(ns, web, (s) => s.app.status?.canary?.step === 1 && s.pods.filter((p) => revisionOf(p) !== stable).length === 1, {
      timeoutMs: 90_000,
      what: 'the canary held at its pause step',
    });
    const update = held.app.status?.updateRevision ?? '';
    const appPage = `${origin}/rollouts/${ns}/${web}`;

    // The read-only viewer: no action, a 403 confirm step, and a forged POST from the page's origin writes nothing.
    const page = await browserPage(cleanups);
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${reader}` });
    expect((await page.goto(appPage))?.status()).toBe(200);
    await shows(page, 'Canary steps', "the read-only viewer's App page");
    expect(await page.locator('nav.actions').count()).toBe(0);
    expect((await page.goto(`${appPage}/abort`))?.status()).toBe(403);
    await shows(page, 'may not change this App', 'the refusal');
    await shot(page, 'action-refused');
    const forged = await page.evaluate(
      async ([url, revision]) =>
        (await fetch(url ?? '', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `revision=${revision ?? ''}` }))
          .status,
      [`${appPage}/abort`, update],
    );
    expect(forged).toBe(403);
    const untouched = await getApp(ns, web);
    expect(untouched.metadata.annotations?.[RolloutAnnotation.abort]).toBeUndefined();
    expect(untouched.status?.abort).toBeUndefined();
    expect(await eventsOf(ns, web, 'ActionRequested')).toEqual([]);

    // The viewer who may patch: the action offered, confirmed, written.
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${operator}` });
    expect((await page.goto(appPage))?.status()).toBe(200);
    await page.getByRole('link', { name: 'Abort' }).click();
    await shows(page, `Abort ${ns}/${web}?`, 'the confirm step');
    await shot(page, 'action-confirm', 'rollouts-action-confirm.png');
    await page.getByRole('button', { name: 'Abort' }).click();
    await shows(page, `Done: rollout of revision ${update} aborted`, 'the answer to the abort');
    await shot(page, 'action-done');

    const back = await until(ns, web, (s) => s.app.status?.abort !== undefined && s.pods.length === 3 && s.pods.every((p) => revisionOf(p) === stable), {
      timeoutMs: 90_000,
      what: 'the App back at its stable revision',
    });
    expect(back.app.metadata.annotations?.[RolloutAnnotation.abort]).toBe(update);
    const requested = await eventsOf(ns, web, 'ActionRequested');
    expect(requested.map((e) => e.note)).toEqual([`abort requested by system:serviceaccount:${ns}:operator from the rollouts page`]);

    // The App's page shows the abort and the Event naming who asked.
    expect((await page.goto(appPage))?.status()).toBe(200);
    await shows(page, /^aborted$/, 'the aborted state');
    await shows(page, `abort requested by system:serviceaccount:${ns}:operator`, 'the Event in the App page');
    await shot(page, 'action-aborted');

    // Once the App is still, its page is too: a poll a few seconds later with the ETag it holds is a 304 (the page
    // renders times absolute). Until the worker's last status writes land the body may still change: polled.
    const headers = { authorization: `Bearer ${operator}` };
    const still = async (): Promise<true | undefined> => {
      const etag = (await fetch(appPage, { headers })).headers.get('etag') ?? '';
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      return (await fetch(appPage, { headers: { ...headers, 'if-none-match': etag } })).status === 304 || undefined;
    };
    await waitFor(still, { timeoutMs: 60_000, what: 'a 304 for a second poll of a still App' });
  });
});
