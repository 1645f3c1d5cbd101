/**
 * What a reconcile did, as an on-call person sees it in Bull Board: a real watcher (board with credentials) and
 * a real worker reconcile a new App; headless Chromium opens the completed job's page and finds the job's summary
 * (its return value: the actions taken) and its log lines (one per phase that acted). Screenshots of both tabs
 * are saved under test-results/.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from 'bullmq';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApp, settled, template } from '../app/harness.ts';
import { CHROMIUM, CHROMIUM_ARGS, shows } from './chromium.ts';
import { ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const RESULTS = join(PROJECT_ROOT, 'test-results');

describe('a reconcile job in Bull Board', () => {
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('shows the summary and the log lines of a completed reconcile', async () => {
    printLogsOnFailure(procs);
    const { kubeconfig, redisUrl } = sandbox();
    const ns = await freshNamespace('board-sum');
    const prefix = uniquePrefix('board-sum');
    const password = randomBytes(16).toString('hex');
    const env = ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [ns] }, { EBB_BOARD: 'true', EBB_BOARD_USER: 'ops', EBB_BOARD_PASSWORD: password });
    const watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    procs.push(spawnEbb('worker', { ...env, EBB_BOARD: 'false' }));
    const board = `http://127.0.0.1:${await watcher.httpPort()}/board`;

    const name = 'summary-demo';
    await createApp(ns, name, { replicas: 2, template: template(name, 'v1') });
    await settled(ns, name);

    // The completed reconcile that created the pods: its return value counts them, its log names them.
    const connection = redisConnection(redisUrl, { forWorker: false, name: 'board-summary-test' });
    const queue = createReconcileQueue(connection, parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
    cleanups.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    const job = await waitFor(
      async () => {
        const done = (await queue.getJobs(['completed'], 0, 50)) as Job[];
        return done.find((j) => JSON.stringify(j.returnvalue ?? {}).includes('createPod'));
      },
      { timeoutMs: 30_000, what: 'a completed reconcile that created pods' },
    );
    const { logs } = await queue.getJobLogs(job.id ?? '');
    const podsLine = logs.find((l) => l.startsWith('pods:'));
    expect(podsLine, `job log: ${JSON.stringify(logs)}`).toBeDefined();

    const profile = await mkdtemp(join(tmpdir(), 'ebb-chromium-'));
    cleanups.push(() => rm(profile, { recursive: true, force: true }));
    const context: BrowserContext = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    cleanups.push(() => context.close());
    const page = context.pages()[0] ?? (await context.newPage());
    await page.setExtraHTTPHeaders({ authorization: `Basic ${Buffer.from(`ops:${password}`).toString('base64')}` });
    await mkdir(RESULTS, { recursive: true });

    const res = await page.goto(`${board}/queue/reconcile/${encodeURIComponent(job.id ?? '')}`);
    expect(res?.status()).toBe(200);
    await shows(page, job.id ?? '', 'the job page');
    await page
      .getByRole('button', { name: 'Data', exact: true })
      .first()
      .click()
      .catch(() => undefined);
    await shows(page, /createPod/, 'the summary (return value) on the job page');
    const dataShot = join(RESULTS, 'bull-board-job-summary.png');
    await page.screenshot({ path: dataShot, fullPage: true });

    await page.getByText('Logs', { exact: true }).first().click();
    await shows(page, podsLine ?? 'pods:', 'the job log lines in the Logs tab');
    const logShot = join(RESULTS, 'bull-board-job-logs.png');
    await page.screenshot({ path: logShot, fullPage: true });
    for (const shot of [dataShot, logShot]) expect((await stat(shot)).size).toBeGreaterThan(1000);
  });
});
