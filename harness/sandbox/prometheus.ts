/**
 * A real Prometheus (Debian's `prometheus`) for tests: its own temporary storage, on a free port, scraping
 * the given targets every second. Stopped by its PID (and by the reaper if this process dies first).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

/**
 * Starts Prometheus scraping `targets` (`host:port`, path /metrics) every second, evaluating `rules` (the
 * `groups` of a rule file, as YAML) every second; resolves once it is ready. Stopping removes its storage.
 */
export async function startPrometheus(targets: readonly string[], signal?: AbortSignal, rules?: string): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-prometheus-'));
  if (rules !== undefined) await writeFile(join(dir, 'rules.yml'), rules);
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    ...(rules !== undefined ? ['rule_files:', `  - ${JSON.stringify(join(dir, 'rules.yml'))}`] : []),
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
      const stop = async (): Promise<void> => {
        await child.stop(10_000);
        await rm(dir, { recursive: true, force: true });
      };
      return { url, pid: child.pid, stop };
    } catch (err) {
      last = err;
      await child.stop(5_000);
    }
  }
  throw last instanceof Error ? last : new Error('prometheus did not start');
}
