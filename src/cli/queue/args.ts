import { formatDuration, parseDuration } from '../../common/duration.ts';
import { formatKey, parseKey } from '../../queue/names.ts';
import type { RateLimit } from '../../queue/overrides.ts';
import { UsageError } from '../usage.ts';

/** `ebb queue ...`, parsed. */
export type QueueArgs =
  | { op: 'help' }
  | { op: 'status'; failed: number; json: boolean }
  | { op: 'pause' }
  | { op: 'resume' }
  | { op: 'concurrency'; value: number | null | 'reset' }
  | { op: 'rate-limit'; value: RateLimit | null | 'reset' }
  | { op: 'retry-failed' }
  | { op: 'quarantined'; json: boolean }
  | { op: 'release'; key: string };

/** The same bounds as EBB_QUEUE_GLOBAL_CONCURRENCY, EBB_QUEUE_RATE_LIMIT_MAX and EBB_QUEUE_RATE_LIMIT_DURATION. */
export const LIMITS = { concurrency: { min: 1, max: 100_000 }, rateMax: { min: 1, max: 1_000_000 }, rateWindowMs: { min: 1, max: 3_600_000 } } as const;
const FAILED_MAX = 1_000;
const DEFAULT_FAILED = 10;

export const QUEUE_USAGE = `usage:
  ebb queue status [--failed N] [--json]     jobs per state and queue, oldest waiting job, limits, the last N failed jobs (default ${DEFAULT_FAILED})
  ebb queue pause                            no reconcile starts; events are still recorded as jobs
  ebb queue resume                           reconciles start again
  ebb queue concurrency N|none|reset         reconciles all workers together run at once (N from ${LIMITS.concurrency.min} to ${LIMITS.concurrency.max})
  ebb queue rate-limit N/DURATION|none|reset at most N reconciles start per DURATION (e.g. 50/1s), cluster-wide
  ebb queue retry-failed                     reconcile again every object whose job failed
  ebb queue quarantined [--json]             objects whose reconciles are held: they killed their worker while running alone
  ebb queue release App NAMESPACE/NAME       lift an object's quarantine (also: ImageList NAME); a change to the object does not
A limit set here wins over the watcher's EBB_QUEUE_GLOBAL_CONCURRENCY / EBB_QUEUE_RATE_LIMIT_* until reset;
"none" removes the limit, "reset" returns to the watcher's setting (applied at its next resync or start).
`;

const fail = (message: string): never => {
  throw new UsageError(message, QUEUE_USAGE);
};

function intIn(text: string, what: string, bounds: { min: number; max: number }): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max)
    fail(`${what} must be a whole number from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(text)}`);
  return n;
}

/** `N/DURATION` (`50/1s`, `1/500ms`); a bare `N` means per second. */
export function parseRateLimit(text: string): RateLimit {
  const [maxText = '', windowText = '1s', ...rest] = text.split('/');
  if (rest.length > 0 || maxText === '') fail(`rate limit must look like N/DURATION (e.g. 50/1s), got ${JSON.stringify(text)}`);
  const max = intIn(maxText, 'the number of reconciles of a rate limit', LIMITS.rateMax);
  const durationMs = parseDuration(windowText);
  const { min, max: top } = LIMITS.rateWindowMs;
  if (durationMs === undefined || durationMs < min || durationMs > top) {
    fail(
      `the window of a rate limit must be a duration from ${formatDuration(min)} to ${formatDuration(top)} (like 1s, 500ms, 1m), got ${JSON.stringify(windowText)}`,
    );
  }
  return { max, durationMs: durationMs ?? 0 };
}

function limitValue<T>(args: readonly string[], op: string, parse: (text: string) => T): T | null | 'reset' {
  if (args.length !== 1) fail(`ebb queue ${op} takes one argument, got ${args.length}`);
  const text = args[0] ?? '';
  if (text === 'none' || text === 'reset') return text === 'none' ? null : 'reset';
  return parse(text);
}

function noArgs(op: string, args: readonly string[]): void {
  if (args.length > 0) fail(`ebb queue ${op} takes no arguments, got ${args.join(' ')}`);
}

function statusArgs(args: readonly string[]): QueueArgs {
  let failed = DEFAULT_FAILED;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--json') json = true;
    else if (a === '--failed' || a.startsWith('--failed=')) {
      const value = a === '--failed' ? args[++i] : a.slice('--failed='.length);
      if (value === undefined) fail('--failed needs a number');
      failed = intIn(value ?? '', '--failed', { min: 0, max: FAILED_MAX });
    } else fail(`ebb queue status: unknown argument ${JSON.stringify(a)}`);
  }
  return { op: 'status', failed, json };
}

/** `App NAMESPACE/NAME` or `ImageList NAME`, as `ebb queue quarantined` prints them. */
function releaseKey(args: readonly string[]): string {
  try {
    return formatKey(parseKey(args.join(' ')));
  } catch {
    return fail(`ebb queue release takes App NAMESPACE/NAME or ImageList NAME, got ${JSON.stringify(args.join(' '))}`);
  }
}

/** Pure: `ebb queue` arguments → what to do. Throws UsageError (exit code 2) on anything else. */
export function parseQueueArgs(args: readonly string[]): QueueArgs {
  const [op, ...rest] = args;
  switch (op) {
    case 'help':
    case '--help':
    case '-h':
      return { op: 'help' };
    case 'status':
      return statusArgs(rest);
    case 'pause':
    case 'resume':
    case 'retry-failed':
      noArgs(op, rest);
      return { op };
    case 'quarantined':
      if (rest.some((a) => a !== '--json')) fail(`ebb queue quarantined: unknown argument ${JSON.stringify(rest.find((a) => a !== '--json'))}`);
      return { op, json: rest.includes('--json') };
    case 'release':
      return { op, key: releaseKey(rest) };
    case 'concurrency':
      return { op, value: limitValue(rest, op, (t) => intIn(t, 'concurrency', LIMITS.concurrency)) };
    case 'rate-limit':
      return { op, value: limitValue(rest, op, parseRateLimit) };
    case undefined:
      return fail('ebb queue needs a subcommand');
    default:
      return fail(`unknown subcommand ${JSON.stringify(op)}`);
  }
}
