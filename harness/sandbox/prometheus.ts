/**
 * A real Prometheus (Debian's `prometheus`) for tests: its own temporary storage, on a free port, scraping
 * the given targets every second. Stopped by its PID (and by the reaper if this process dies first).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../src/common/wait.ts';
import { freePort } from './ports.ts';
import { startChild } from './process.ts';

export interface RunningPrometheus {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const START_ATTEMPTS = 3;

/** Starts Prometheus scraping `targets` (`host:port`, path /metrics) every second; resolves once it is ready. */
export async function startPrometheus(targets: readonly string[], signal?: AbortSignal): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    '  - job_name: test',
    '    static_configs:',
    `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  let last: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const args = [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, `data-${attempt}`)}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ];
    const child = startChild('prometheus', 'prometheus', args, join(dir, 'prometheus.log'));
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitFor(async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
        signal,
        what: 'prometheus ready',
      });
      return { url, pid: child.pid, stop: () => child.stop(10_000) };
    } catch (err) {
      last = err;
      await child.stop(5_000);
    }
  }
  throw last instanceof Error ? last : new Error('prometheus did not start');
}
