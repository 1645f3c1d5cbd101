import { describe, expect, it } from 'vitest';
import { UsageError } from '../usage.ts';
import { parseQueueArgs, parseRateLimit, QUEUE_USAGE } from './args.ts';

function usageError(args: string[]): UsageError {
  try {
    parseQueueArgs(args);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error(`expected a UsageError for ${JSON.stringify(args)}`);
}

describe('parseQueueArgs', () => {
  it.each([
    [['status'], { op: 'status', failed: 10, json: false }],
    [['status', '--failed', '3', '--json'], { op: 'status', failed: 3, json: true }],
    [['status', '--failed=0'], { op: 'status', failed: 0, json: false }],
    [['pause'], { op: 'pause' }],
    [['resume'], { op: 'resume' }],
    [['retry-failed'], { op: 'retry-failed' }],
    [['concurrency', '4'], { op: 'concurrency', value: 4 }],
    [['concurrency', 'none'], { op: 'concurrency', value: null }],
    [['concurrency', 'reset'], { op: 'concurrency', value: 'reset' }],
    [['rate-limit', '50/1s'], { op: 'rate-limit', value: { max: 50, durationMs: 1000 } }],
    [['rate-limit', '3/1m30s'], { op: 'rate-limit', value: { max: 3, durationMs: 90_000 } }],
    [['rate-limit', '20'], { op: 'rate-limit', value: { max: 20, durationMs: 1000 } }],
    [['rate-limit', 'none'], { op: 'rate-limit', value: null }],
    [['rate-limit', 'reset'], { op: 'rate-limit', value: 'reset' }],
    [['quarantined'], { op: 'quarantined', json: false }],
    [['quarantined', '--json'], { op: 'quarantined', json: true }],
    [['release', 'App', 'team-a/web'], { op: 'release', key: 'App team-a/web' }],
    [['release', 'ImageList', 'node-1'], { op: 'release', key: 'ImageList node-1' }],
    [['help'], { op: 'help' }],
    [['--help'], { op: 'help' }],
  ])('%j', (args, want) => {
    expect(parseQueueArgs(args)).toEqual(want);
  });

  it.each([
    [[], 'needs a subcommand'],
    [['drain'], 'unknown subcommand "drain"'],
    [['pause', 'now'], 'takes no arguments'],
    [['concurrency'], 'takes one argument, got 0'],
    [['concurrency', '1', '2'], 'takes one argument, got 2'],
    [['concurrency', '0'], 'from 1 to 100000'],
    [['concurrency', '100001'], 'from 1 to 100000'],
    [['concurrency', '2.5'], 'whole number'],
    [['concurrency', '-1'], 'whole number'],
    [['rate-limit', '10/0'], 'duration from 1ms to 1h'],
    [['rate-limit', '10/2h'], 'duration from 1ms to 1h'],
    [['rate-limit', '10/5'], 'duration from 1ms to 1h'],
    [['rate-limit', '/1s'], 'N/DURATION'],
    [['rate-limit', '1/1s/2'], 'N/DURATION'],
    [['rate-limit', '0/1s'], 'from 1 to 1000000'],
    [['status', '--failed'], '--failed needs a number'],
    [['status', '--failed', '1001'], 'from 0 to 1000'],
    [['status', '--verbose'], 'unknown argument "--verbose"'],
    [['release', 'web'], 'takes App NAMESPACE/NAME or ImageList NAME'],
    [['release', 'Pod', 'a/b'], 'takes App NAMESPACE/NAME or ImageList NAME'],
    [['quarantined', '--all'], 'unknown argument "--all"'],
  ])('%j is a usage error: %s', (args, message) => {
    const err = usageError(args);
    expect(err.message).toContain(message);
    expect(err.code).toBe('BadArguments');
    expect(err.usage).toBe(QUEUE_USAGE);
  });

  it('reads a rate limit without a window as per second', () => {
    expect(parseRateLimit('7')).toEqual({ max: 7, durationMs: 1000 });
  });

  it('documents every subcommand in its usage', () => {
    for (const op of ['status', 'pause', 'resume', 'concurrency', 'rate-limit', 'retry-failed', 'quarantined', 'release'])
      expect(QUEUE_USAGE).toContain(`ebb queue ${op}`);
  });
});
