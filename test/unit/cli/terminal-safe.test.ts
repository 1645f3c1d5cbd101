/**
 * Terminal-safe printing: `ebb queue status` as an operator runs it (the real CLI as a child process) against a
 * real redis-server holding a failed job whose data and failure reason carry escape sequences and control
 * characters, written by anyone who can name an object or make a reconcile fail; the output has none of them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { reconcileWorkerOptions } from '../../../src/queue/queues.ts';
import { useRedis } from '../queue/support.ts';

const redis = useRedis();
const CLI = `${PROJECT_ROOT}/src/cli/main.ts`;
// ESC (CSI, OSC), a C1 CSI, BEL, and a text-reordering control.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe('ebb queue status', () => {
  it('prints job data and failure reasons without escape sequences or control characters', async () => {
    const cfg = redis.config({ EBB_QUEUE_ATTEMPTS: '1' });
    const queue = redis.reconcileQueue(cfg);
    const reason = '\x1b]0;owned\x07boom \x1b[31mred\x1b[0m\x1b[2J\x9b1Agone\u202eesrever';
    redis.worker(queue.name, () => Promise.reject(new Error(reason)), reconcileWorkerOptions(redis.connection(true), cfg));
    await queue.add('App', { kind: 'App', namespace: 'ns', name: 'web\x1b[8m\x9b2J\u202e' } as never, { jobId: 'unsafe' });
    await waitFor(async () => ((await queue.getFailedCount()) === 1 ? true : undefined), { timeoutMs: 15_000, intervalMs: 50, what: 'the job failed' });

    const env = { PATH: process.env['PATH'] ?? '', EBB_REDIS_URL: redis.url(), EBB_QUEUE_PREFIX: cfg.prefix };
    const run = (args: string[]) => promisify(execFile)(process.execPath, [CLI, 'queue', ...args], { cwd: PROJECT_ROOT, env });
    const text = (await run(['status'])).stdout;
    expect(text).toContain('boom red');
    expect(text).toContain('goneesrever');
    expect(text).not.toMatch(UNSAFE);
    const json = (await run(['status', '--json'])).stdout;
    expect(json).not.toMatch(UNSAFE);
    expect(JSON.stringify(JSON.parse(json))).toContain('boom');
  }, 60_000);
});
