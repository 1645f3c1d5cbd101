import { describe, expect, it } from 'vitest';
import { countsDelta, parseWatcherCounts, watcherCountsTable } from '../../../bench/lib/watcher-counts.ts';

const metrics = (added: number, dropped: number): string =>
  [
    '# HELP ebb_enqueue_total Keys enqueued.',
    '# TYPE ebb_enqueue_total counter',
    `ebb_enqueue_total{cause="event",outcome="added"} ${added}`,
    `ebb_watch_events_ignored_total{resource="pods",reason="unread-fields"} ${dropped}`,
    'process_cpu_seconds_total 12.5',
    'ebb_resync_total 3',
  ].join('\n');

describe('watcher counts', () => {
  it('keeps only the counters of interest, by series', () => {
    expect(parseWatcherCounts(metrics(4, 10))).toEqual({
      'ebb_enqueue_total{cause="event",outcome="added"}': 4,
      'ebb_watch_events_ignored_total{resource="pods",reason="unread-fields"}': 10,
      ebb_resync_total: 3,
    });
  });

  it('reports what changed over a phase, and a table with the reconciles first', () => {
    const delta = countsDelta(parseWatcherCounts(metrics(4, 10)), parseWatcherCounts(metrics(9, 10)));
    expect(delta).toEqual({ 'ebb_enqueue_total{cause="event",outcome="added"}': 5 });
    const table = watcherCountsTable([{ phase: 'wave', reconciles: 5, watcher: delta }]) ?? '';
    expect(table.split('\n')[2]).toBe('| App reconciles (workers) | 5 |');
    expect(watcherCountsTable([{ phase: 'sts' }])).toBeUndefined();
  });
});
