/**
 * Bull Board as a person sees it: the real `ebb watcher` serves it (HTTP Basic credentials, read-only, the
 * production default), a headless Chromium opens it, is refused without credentials, sees both ebb queues and
 * a reconcile job enqueued for a known object, and is refused (405) when it asks the board to retry jobs. A
 * screenshot of the queue page is saved under test-results/. `/board` and `/board/` both answer.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { dedupId, type ObjectKey } from '../../../src/queue/names.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { sandbox } from '../support.ts';
import { ebbEnv, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from './helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const RESULTS = join(PROJECT_ROOT, 'test-results');

interface BoardQueues {
  queues: { name: string; jobs: { id: string }[] }[];
}

/** Polls the board's API (what its page draws from) until it lists `jobId` among the reconcile queue's waiting jobs. */
async function boardListsWaiting(board: string, authorization: string, jobId: string): Promise<void> {
  let last = '';
  const url = `${board}/api/queues?activeQueue=reconcile&status=waiting&page=1&jobsPerPage=10`;
  await waitFor(
    async () => {
      const res = await fetch(url, { headers: { authorization }, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 1_000)}`;
      if (!res.ok) return undefined;
      const body = JSON.parse(text) as BoardQueues;
      return body.queues.find((q) => q.name === 'reconcile')?.jobs.some((j) => j.id === jobId) ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: `the board's API listing job ${jobId} as waiting` },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; last answer: ${last}`);
  });
}

describe('Bull Board in a browser', () => {
  const procs: EbbProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.all(procs.map((p) => p.stop()));
  });

  it('asks for credentials, shows the queues and a job, and refuses writes in read-only mode', async () => {
    const { kubeconfig, redisUrl } = sandbox();
    printLogsOnFailure(procs);
    const prefix = uniquePrefix('board');
    const namespace = `board-${randomBytes(4).toString('hex')}`;
    const password = randomBytes(16).toString('hex'); // 32 characters: the shortest password the board accepts
    const watcher = spawnEbb(
      'watcher',
      ebbEnv({ kubeconfig, redisUrl, prefix, namespaces: [namespace] }, { EBB_BOARD: 'true', EBB_BOARD_USER: 'ops', EBB_BOARD_PASSWORD: password }),
    );
    procs.push(watcher);
    const board = `http://127.0.0.1:${await watcher.httpPort()}/board`;

    // A reconcile job for a known object; no worker runs, so it waits where the board shows it.
    const connection = redisConnection(redisUrl, { forWorker: false, name: 'board-test' });
    const queue = createReconcileQueue(connection, parseQueueConfig({ EBB_REDIS_URL: redisUrl, EBB_QUEUE_PREFIX: prefix }));
    cleanups.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    const key: ObjectKey = { kind: 'App', namespace, name: 'board-demo' };
    const { jobId } = await enqueue(queue, key);
    expect(jobId.startsWith(`${dedupId(key)}.`)).toBe(true);

    const profile = await mkdtemp(join(tmpdir(), 'ebb-chromium-'));
    cleanups.push(() => rm(profile, { recursive: true, force: true }));
    const context: BrowserContext = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    cleanups.push(() => context.close());
    const page = context.pages()[0] ?? (await context.newPage());

    // Chromium answers the Basic challenge of a page it has no credentials for by failing the navigation
    // (ERR_INVALID_AUTH_CREDENTIALS when no one can type them): the response itself is what it got.
    const [refused, navigation] = await Promise.all([page.waitForResponse(board), page.goto(board).catch((err: unknown) => err)]);
    expect(refused.status()).toBe(401);
    expect(await refused.headerValue('www-authenticate')).toContain('Basic realm="ebb Bull Board"');
    expect(String(navigation)).toContain('ERR_INVALID_AUTH_CREDENTIALS');

    const authorization = `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`;
    await page.setExtraHTTPHeaders({ authorization });
    const home = await page.goto(board);
    expect(home?.status()).toBe(200);
    await page.getByText('ebb queues').first().waitFor({ timeout: 30_000 });
    await page
      .getByRole('link', { name: /reconcile/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await expect(page.getByRole('link', { name: /timers/ }).count()).resolves.toBeGreaterThan(0);

    // The card exists once the board's own API lists the job as waiting: wait for that first, so a failure
    // says which side (the server's listing, or the page drawing it) did not get there.
    await boardListsWaiting(board, authorization, jobId);
    await page.goto(`${board}/queue/reconcile?status=waiting`);
    await page
      .getByText(jobId)
      .first()
      .waitFor({ timeout: 30_000 })
      .catch(async (err: unknown) => {
        const shown = (
          await page
            .locator('main')
            .innerText()
            .catch(() => '(no main element)')
        ).slice(0, 2_000);
        throw new Error(`the board lists job ${jobId} as waiting, yet the page did not draw its card: ${String(err)}\npage shows: ${shown}`);
      });
    await mkdir(RESULTS, { recursive: true });
    const shot = join(RESULTS, 'bull-board.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect((await stat(shot)).size).toBeGreaterThan(1000);

    // Writes through the board's API, from the page (same origin, same credentials): refused, job untouched.
    const writes = await page.evaluate(async (base) => {
      const put = async (path: string): Promise<number> => (await fetch(`${base}${path}`, { method: 'PUT' })).status;
      return [await put('/api/queues/reconcile/retry/failed'), await put('/api/queues/reconcile/clean/waiting')];
    }, board);
    expect(writes).toEqual([405, 405]);
    expect(await queue.getJobState(jobId)).toBe('waiting');

    // The board answers with and without the trailing slash many ingresses send, behind the same login.
    const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
    for (const url of [board, `${board}/`]) {
      const res = await get(url, { authorization });
      expect(res.status, url).toBe(200);
      expect(await res.text(), url).toContain('<base href="/board/"');
    }
    expect((await get(`${board}/`)).status).toBe(401);
  });
});
