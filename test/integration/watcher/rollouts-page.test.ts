/**
 * The rollouts page in headless Chromium, on a real sandbox: a real `ebb watcher` (board with Kubernetes
 * logins: `get` on Apps) and a real worker roll out Apps in two namespaces. A canary App measures a web check
 * against a local HTTP server:
 * - the cluster-wide viewer's list shows every App with its state and counts;
 * - the App's page, mid-canary, shows its revisions, the current step, its pods and the check's measurements
 *   charted by uPlot; when the check starts failing the rollout aborts, and the open page shows it without a
 *   reload (polling with ETags);
 * - Bull Board links each of the App's reconcile jobs to the App's page;
 * - a viewer of namespace A sees A's Apps only, nothing of B's, and B's App page answers 404.
 * Screenshots of each state go to test-results/rollouts-page/; with EBB_DOC_SHOTS=1 the docs' screenshots
 * (docs/img/rollouts-*.png) are written too.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnalysisCheck } from '../../../src/api/analysis.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApp, patchApp, settled, template, until } from '../app/harness.ts';
import { APP_READ_RULE, boardViewer } from './board-viewers.ts';
import { browserPage, shot, shows } from './chromium.ts';
import { deleteNamespace, ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

describe('the rollouts page in Chromium', () => {
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.all(procs.map((p) => p.stop()));
  });

  it("lists the Apps, shows a canary's analysis live until it aborts, and shows a namespace viewer only its namespace", async () => {
    printLogsOnFailure(procs);
    const { rest, kubeconfig, redisUrl } = sandbox();
    const nsA = await freshNamespace('page-a');
    const nsB = await freshNamespace('page-b');
    cleanups.push(
      () => deleteNamespace(rest, nsA),
      () => deleteNamespace(rest, nsB),
    );

    // The check's answers: a slowly moving error rate, until the test makes it fail.
    let rate = 0.01;
    let asked = 0;
    const server: Server = createServer((_req, res) => {
      asked++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { errorRate: rate > 0.05 ? rate : Number((0.01 + (asked % 4) * 0.005).toFixed(3)) } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rate`;

    // A's viewer: get and list Apps in A (RoleBinding); the operator: the same cluster-wide.
    const viewer = await boardViewer(rest, { namespace: nsA, name: 'viewer', rules: [APP_READ_RULE] }, cleanups);
    const operator = await boardViewer(rest, { namespace: nsA, name: 'operator', rules: [APP_READ_RULE], clusterWide: true }, cleanups);

    const env = ebbEnv(
      { kubeconfig, redisUrl, prefix: uniquePrefix('page'), namespaces: [nsA, nsB] },
      {
        EBB_BOARD: 'true',
        EBB_HTTP_ADDRESS: '0.0.0.0',
        EBB_SCALER: 'false',
        EBB_BOARD_KUBE_AUTH_RESOURCE: 'apps.apps.ebb.dev',
        EBB_CHECK_NETWORKS: 'local',
        EBB_CHECK_ALLOWED_HOSTS: '*/127.0.0.1',
      },
    );
    const watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    procs.push(spawnEbb('worker', { ...env, EBB_BOARD: 'false' }));
    // A cold start on a loaded machine may take more than the default 30 s.
    const origin = `http://127.0.0.1:${await watcher.httpPort(120_000)}`;

    // The canary App: one pod, then the check (measured every 2s), then a pause until someone resumes.
    const errors: AnalysisCheck = { name: 'error-rate', interval: '2s', count: 60, web: { url, successCondition: '$.data.errorRate < 0.05' } };
    const web = 'checkout';
    await createApp(nsA, web, {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      template: template(web, 'v1'),
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          canary: { steps: [{ replicas: 1 }, { analysis: ['error-rate'] }, { pause: {} }, { replicas: '100%' }] },
          analysis: { checks: [errors] },
        },
      },
    });
    await Promise.all([
      createApp(nsA, 'catalog', { replicas: 2 }),
      createApp(nsA, 'search', { replicas: 2 }),
      createApp(nsB, 'b-secret-ledger', { replicas: 1 }),
    ]);
    await Promise.all([
      settled(nsA, web, undefined, 90_000),
      settled(nsA, 'catalog', undefined, 90_000),
      settled(nsA, 'search', undefined, 90_000),
      settled(nsB, 'b-secret-ledger', undefined, 90_000),
    ]);
    await patchApp(nsA, web, { template: template(web, 'v2') });
    await until(nsA, web, (s) => (s.app.status?.analysis?.runs[0]?.measurements.length ?? 0) >= 3, {
      timeoutMs: 90_000,
      what: 'three measurements of the check',
    });

    const page = await browserPage(cleanups);
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${operator}` });

    // The list: every App of both namespaces, the canary first (rolling before complete).
    expect((await page.goto(`${origin}/rollouts/`))?.status()).toBe(200);
    await shows(page, 'b-secret-ledger', "the operator's list");
    const firstRow = page.locator('tbody tr').first();
    expect(await firstRow.innerText()).toMatch(/rolling[\s\S]*checkout/);
    expect(await page.getByRole('list', { name: 'Apps per state' }).innerText()).toMatch(/rolling\s*1/);
    await shot(page, 'list', 'rollouts-list.png');
    // The filter by state, by keyboard: the form's labelled selects.
    await page.getByLabel('State', { exact: true }).selectOption('complete');
    await page.getByRole('button', { name: 'Show' }).press('Enter');
    await page.waitForURL(/state=complete/);
    expect(await page.locator('tbody').innerText()).not.toContain('checkout');

    // The App mid-canary: the current step, the check and its chart.
    expect((await page.goto(`${origin}/rollouts/${nsA}/${web}`))?.status()).toBe(200);
    await shows(page, 'Canary steps', 'the canary steps');
    expect(await page.locator('li[aria-current="step"]').innerText()).toContain('run the checks error-rate');
    await shows(page, /error-rate/, 'the check');
    await page.locator('#chart-0 .uplot canvas').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('table').filter({ hasText: 'Ordinal' }).locator('tbody tr').count()).toBe(3);
    await shot(page, 'app-mid-canary', 'rollouts-app-canary.png');

    // The check fails: the rollout aborts, and the open page shows it without a reload.
    const loads: string[] = [];
    page.on('load', () => loads.push(page.url()));
    rate = 0.4;
    await until(nsA, web, (s) => s.app.status?.abort !== undefined, { timeoutMs: 90_000, what: 'the abort' });
    await shows(page, /^aborted$/, 'the aborted state, updated in place', 30_000);
    expect(loads).toEqual([]);
    await shows(page, /Failed/, 'the failed check');
    await shot(page, 'app-aborted', 'rollouts-app-failing-check.png');

    // Bull Board links the App's reconcile jobs to its page.
    const answer = await fetch(`${origin}/board/api/queues?activeQueue=reconcile&status=completed&page=1&jobsPerPage=50`, {
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(answer.status).toBe(200);
    const queues = ((await answer.json()) as { queues: { name: string; jobs: { externalUrl?: { href: string } }[] }[] }).queues;
    const links = queues.find((q) => q.name === 'reconcile')?.jobs.map((j) => j.externalUrl?.href) ?? [];
    expect(links).toContain(`/rollouts/${nsA}/${web}`);

    // A's viewer: A's Apps only; B's App is as if it did not exist.
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${viewer}` });
    expect((await page.goto(`${origin}/rollouts/`))?.status()).toBe(200);
    await shows(page, 'catalog', "A's viewer's list");
    const body = await page.content();
    expect(body).not.toContain('b-secret-ledger');
    expect(body).not.toContain(nsB);
    await shot(page, 'namespace-viewer');
    expect((await page.goto(`${origin}/rollouts/${nsB}/b-secret-ledger`))?.status()).toBe(404);
    expect((await page.goto(`${origin}/rollouts/?namespace=${nsB}`))?.status()).toBe(200);
    expect(await page.content()).not.toContain('b-secret-ledger');
  });
});
