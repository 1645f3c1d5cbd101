/**
 * deploy/components/monitoring: every metric its alert rules and its dashboard name is one the processes export,
 * and `promtool` (Debian's prometheus package, which `make test` installs) accepts the rules.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { daemonMetrics } from '../../../src/daemon/metrics.ts';
import { registerQueueMetrics } from '../../../src/queue/metrics.ts';
import { watcherMetrics } from '../../../src/watcher/metrics.ts';
import { workerMetrics } from '../../../src/workers/metrics.ts';
import { ROOT } from './kustomize.ts';

const run = promisify(execFile);
const DIR = join(ROOT, 'deploy/components/monitoring');

/** Every metric name the processes export (histograms also as their _bucket, _sum and _count series). */
async function exported(): Promise<Set<string>> {
  const queues = new Registry();
  registerQueueMetrics(queues, []);
  const registries = [watcherMetrics().registry, workerMetrics().registry, daemonMetrics().registry, queues];
  const names = new Set<string>();
  for (const r of registries) {
    for (const m of await r.getMetricsAsJSON()) {
      names.add(m.name);
      if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m.name}${s}`);
    }
  }
  return names;
}

interface Rules {
  spec: { groups: { name: string; rules: { alert: string; expr: string }[] }[] };
}

async function named(): Promise<{ where: string; metric: string }[]> {
  const rules = parse(await readFile(join(DIR, 'rules.yaml'), 'utf8')) as Rules;
  const dashboard = await readFile(join(DIR, 'ebb-dashboard.json'), 'utf8');
  const exprs = [
    ...rules.spec.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
    ...[...dashboard.matchAll(/"expr": "((?:[^"\\]|\\.)*)"/g)].map((m) => ({ where: 'dashboard', expr: JSON.parse(`"${m[1] ?? ''}"`) as string })),
  ];
  return exprs.flatMap(({ where, expr }) => [...expr.matchAll(/\bebb_[a-z_]+/g)].map((m) => ({ where, metric: m[0] })));
}

describe('the monitoring component', () => {
  it('names only metrics the watcher, worker and daemon export', async () => {
    const names = await exported();
    const used = await named();
    expect(used.length).toBeGreaterThan(20);
    expect(used.filter((u) => !names.has(u.metric))).toEqual([]);
  });

  it('has rules promtool accepts, one alert per state the watcher counts', async () => {
    const rules = parse(await readFile(join(DIR, 'rules.yaml'), 'utf8')) as Rules;
    const dir = await mkdtemp(join(tmpdir(), 'ebb-rules-'));
    try {
      const file = join(dir, 'rules.yaml');
      await writeFile(file, stringify({ groups: rules.spec.groups }));
      const { stdout } = await run('promtool', ['check', 'rules', file]);
      expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const exprs = rules.spec.groups.flatMap((g) => g.rules.map((r) => r.expr)).join('\n');
    for (const state of ['rollout_held', 'aborted', 'quarantined', 'progress_deadline_exceeded', 'failed_create_pod'])
      expect(exprs).toContain(`state="${state}"`);
  });
});
