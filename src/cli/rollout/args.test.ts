import { describe, expect, it } from 'vitest';
import { UsageError } from '../usage.ts';
import { parseRolloutArgs, ROLLOUT_USAGE } from './args.ts';

function usageError(args: string[]): UsageError {
  try {
    parseRolloutArgs(args);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error(`expected a UsageError for ${JSON.stringify(args)}`);
}

describe('parseRolloutArgs', () => {
  it.each([
    [['status', 'app/web'], { op: 'status', name: 'web', namespace: undefined, context: undefined, timeoutMs: undefined, watch: true }],
    [['status', 'web', '-n', 'shop', '--timeout', '5m'], { op: 'status', name: 'web', namespace: 'shop', context: undefined, timeoutMs: 300_000, watch: true }],
    [
      ['status', 'ebapp/web', '--namespace=shop', '--watch=false'],
      { op: 'status', name: 'web', namespace: 'shop', context: undefined, timeoutMs: undefined, watch: false },
    ],
    [
      ['status', 'app.apps.ebb.dev/web', '--timeout=0'],
      { op: 'status', name: 'web', namespace: undefined, context: undefined, timeoutMs: undefined, watch: true },
    ],
    [['pause', 'apps/web'], { op: 'pause', name: 'web', namespace: undefined, context: undefined }],
    [['promote', 'app/web'], { op: 'promote', name: 'web', namespace: undefined, context: undefined, full: false }],
    [['promote', 'app/web', '--full'], { op: 'promote', name: 'web', namespace: undefined, context: undefined, full: true }],
    [['status', 'app/web', '-t', '60s'], { op: 'status', name: 'web', namespace: undefined, context: undefined, timeoutMs: 60_000, watch: true }],
    [['resume', 'app/web', '-n', 'a'], { op: 'resume', name: 'web', namespace: 'a', context: undefined }],
    [['restart', 'app/web'], { op: 'restart', name: 'web', namespace: undefined, context: undefined }],
    [['undo', 'app/web'], { op: 'undo', name: 'web', namespace: undefined, context: undefined, toRevision: 0 }],
    [['undo', 'app/web', '--to-revision', '3'], { op: 'undo', name: 'web', namespace: undefined, context: undefined, toRevision: 3 }],
    [['history', 'app/web', '--revision=2'], { op: 'history', name: 'web', namespace: undefined, context: undefined, revision: 2 }],
    [['history', 'app/web', '--context', 'prod'], { op: 'history', name: 'web', namespace: undefined, context: 'prod', revision: 0 }],
    [
      ['status', 'app/web', '--context=prod', '-n=shop', '--watch=false'],
      { op: 'status', name: 'web', namespace: 'shop', context: 'prod', timeoutMs: undefined, watch: false },
    ],
    [['explain', 'app/web'], { op: 'explain', name: 'web', namespace: undefined, context: undefined, output: 'text', queueTimeoutMs: 3_000 }],
    [
      ['explain', 'app/web', '-o', 'json', '--context', 'c1'],
      { op: 'explain', name: 'web', namespace: undefined, context: 'c1', output: 'json', queueTimeoutMs: 3_000 },
    ],
    [
      ['explain', 'web', '--output=text', '-n', 'shop', '--queue-timeout=30s'],
      { op: 'explain', name: 'web', namespace: 'shop', context: undefined, output: 'text', queueTimeoutMs: 30_000 },
    ],
    [['help'], { op: 'help' }],
  ])('%j', (args, want) => {
    expect(parseRolloutArgs(args)).toEqual(want);
  });

  it.each([
    [[], 'needs a subcommand'],
    [['rollback', 'app/web'], 'unknown subcommand "rollback"'],
    [['status'], 'takes one App (app/NAME), got 0'],
    [['status', 'app/a', 'app/b'], 'takes one App (app/NAME), got 2'],
    [['status', 'statefulset/web'], 'not on "statefulset"'],
    [['status', 'app/Web'], 'is not an App name'],
    [['status', 'app/web', '--timeout', 'soon'], '--timeout must be a duration'],
    [['status', 'app/web', '--timeout', '500ms'], '--timeout must be a duration'],
    [['status', 'app/web', '--watch=maybe'], '--watch is true or false'],
    [['status', 'app/web', '-n'], '--namespace needs a value'],
    [['status', 'app/web', '-n', 'Bad_NS'], 'is not a namespace name'],
    [['undo', 'app/web', '--to-revision', '-1'], '--to-revision needs a whole number'],
    [['undo', 'app/web', '--to-revision', 'x'], '--to-revision needs a whole number'],
    [['pause', 'app/web', '--force'], 'unknown argument "--force"'],
    [['explain', 'app/web', '-o', 'yaml'], '--output is text or json'],
    [['explain', 'app/web', '--context='], '--context needs a context name'],
    [['explain', 'app/web', '--watch'], 'unknown argument "--watch"'],
    [['explain', 'app/web', '--queue-timeout', '500ms'], '--queue-timeout must be a duration from 1s to 5m'],
    [['explain', 'app/web', '--queue-timeout', '10m'], '--queue-timeout must be a duration from 1s to 5m'],
  ])('%j is a usage error: %s', (args, message) => {
    const err = usageError(args);
    expect(err.message).toContain(message);
    expect(err.usage).toBe(ROLLOUT_USAGE);
  });

  it('documents every subcommand and the exit codes in its usage', () => {
    for (const op of ['status', 'pause', 'resume', 'undo', 'history', 'restart', 'explain']) expect(ROLLOUT_USAGE).toContain(`ebb rollout ${op} app/NAME`);
    expect(ROLLOUT_USAGE).toContain('3 progress deadline exceeded');
  });
});
