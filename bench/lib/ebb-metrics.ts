/** Reads the in-process ebb worker's Prometheus metrics: App reconciles, their duration and their queue latency. */

export interface EbbWorkerSample {
  reconciles: number;
  durationSum: number;
  durationCount: number;
  latencySum: number;
  latencyCount: number;
}

function sumOf(text: string, metric: string): number {
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) || !line.includes('kind="App"')) continue;
    n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

export async function readEbbWorker(port: number): Promise<EbbWorkerSample> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await res.text();
  return {
    reconciles: sumOf(text, 'ebb_reconcile_total'),
    durationSum: sumOf(text, 'ebb_reconcile_duration_seconds_sum'),
    durationCount: sumOf(text, 'ebb_reconcile_duration_seconds_count'),
    latencySum: sumOf(text, 'ebb_event_to_reconcile_seconds_sum'),
    latencyCount: sumOf(text, 'ebb_event_to_reconcile_seconds_count'),
  };
}

/** Per-window averages (ms) and counts from two samples. */
export function ebbWindow(a: EbbWorkerSample, b: EbbWorkerSample): { reconciles: number; avgDurationMs: number; avgQueueLatencyMs: number } {
  const dc = b.durationCount - a.durationCount;
  const lc = b.latencyCount - a.latencyCount;
  return {
    reconciles: b.reconciles - a.reconciles,
    avgDurationMs: dc > 0 ? ((b.durationSum - a.durationSum) / dc) * 1000 : Number.NaN,
    avgQueueLatencyMs: lc > 0 ? ((b.latencySum - a.latencySum) / lc) * 1000 : Number.NaN,
  };
}

/** The in-process ebb watcher's watch events by `resource type` and enqueues by `cause outcome`. */
export async function readEbbWatcher(port: number): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^ebb_(watch_events|enqueue)_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
    const key = m[1] === 'watch_events' ? `event ${labels['resource']} ${labels['type']}` : `enqueue ${labels['cause']} ${labels['outcome']}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}
