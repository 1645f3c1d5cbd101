import { formatDuration, parseDuration } from '../../common/duration.ts';
import { UsageError } from '../usage.ts';

/**
 * The App a subcommand works on. `namespace` undefined: the kubeconfig context's, else (in a pod) the service
 * account's, else `default`; `context` undefined: the kubeconfig's current-context.
 */
export interface RolloutTarget {
  name: string;
  namespace: string | undefined;
  context: string | undefined;
}

/** `ebb rollout ...`, parsed. */
export type RolloutArgs =
  | { op: 'help' }
  | ({ op: 'status'; timeoutMs: number | undefined; watch: boolean } & RolloutTarget)
  | ({ op: 'pause' | 'resume' | 'restart' | 'abort' | 'retry' } & RolloutTarget)
  | ({ op: 'promote'; full: boolean } & RolloutTarget)
  | ({ op: 'undo'; toRevision: number } & RolloutTarget)
  | ({ op: 'history'; revision: number } & RolloutTarget)
  | ({ op: 'explain'; output: 'text' | 'json'; queueTimeoutMs: number } & RolloutTarget);

/** Exit codes of `ebb rollout`. */
export const RolloutExit = {
  done: 0,
  /** The rollout failed (an invalid spec, a refused in-place update, the App deleted) or a request failed. */
  failed: 1,
  usage: 2,
  /** The App's progress deadline passed (condition Progressing False, reason ProgressDeadlineExceeded). */
  deadline: 3,
  /** `--timeout` passed before the rollout ended. */
  timeout: 4,
  /** The rollout was aborted (condition Aborted True), whether or not every pod is back at the stable revision yet. */
  aborted: 5,
} as const;

const TIMEOUT_MAX_MS = 7 * 24 * 3_600_000;
/** How long explain waits for Redis, unless --queue-timeout says otherwise; and the longest it may say. */
export const QUEUE_TIMEOUT_DEFAULT_MS = 3_000;
const QUEUE_TIMEOUT_MAX_MS = 300_000;

export const ROLLOUT_USAGE = `usage:
  ebb rollout status app/NAME [-t/--timeout DURATION] [-w/--watch=false]  follow the rollout until it completes, fails, is aborted or passes its deadline
  ebb rollout pause app/NAME                   no pod is updated until resumed (scaling goes on)
  ebb rollout resume app/NAME                  continue a paused rollout (also ends an indefinite canary pause step)
  ebb rollout undo app/NAME [--to-revision N]  go back to the previous revision, or to revision N
  ebb rollout history app/NAME [--revision N]  list the revisions and their analysis, or show revision N's checks and template
  ebb rollout restart app/NAME                 replace every pod, by stamping the pod template
  ebb rollout abort app/NAME                   abort the rollout in progress: pods go back to the stable revision
  ebb rollout retry app/NAME                   end an abort: the rollout starts again from its first step
  ebb rollout promote app/NAME [--full]        skip the remaining canary steps (and lift a step's pause); --full: and the analysis, background checks too
  ebb rollout explain app/NAME [-o json] [--queue-timeout DURATION]
                                               what the rollout waits for, pod by pod, and what ebb does next and when
                                               (the queues are read for at most --queue-timeout, default 3s)
Every subcommand takes -n/--namespace NS (default: the kubeconfig context's namespace, in a pod the pod's,
else "default") and --context NAME (a kubeconfig context other than the current one).
NAME may be written NAME, app/NAME, apps/NAME, ebapp/NAME or app.apps.ebb.dev/NAME.
Exit codes: ${RolloutExit.done} done, ${RolloutExit.failed} failed, ${RolloutExit.usage} bad arguments, ${RolloutExit.deadline} progress deadline exceeded, ${RolloutExit.timeout} --timeout reached, ${RolloutExit.aborted} rollout aborted.
`;

const fail = (message: string): never => {
  throw new UsageError(message, ROLLOUT_USAGE);
};

const RESOURCE_NAMES = new Set(['app', 'apps', 'ebapp', 'app.apps.ebb.dev', 'apps.apps.ebb.dev']);
const DNS_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** `web`, `app/web`, `apps/web`, `ebapp/web`, `app.apps.ebb.dev/web` → `web`. */
export function parseTarget(text: string): string {
  const slash = text.indexOf('/');
  const resource = slash < 0 ? undefined : text.slice(0, slash);
  const name = slash < 0 ? text : text.slice(slash + 1);
  if (resource !== undefined && !RESOURCE_NAMES.has(resource.toLowerCase()))
    fail(`ebb rollout works on Apps (app/NAME), not on ${JSON.stringify(resource)}; for other kinds use kubectl rollout`);
  if (!DNS_NAME.test(name)) fail(`${JSON.stringify(name)} is not an App name`);
  return name;
}

function wholeNumber(text: string | undefined, flag: string, min: number): number {
  const n = text !== undefined && /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min) fail(`${flag} needs a whole number of at least ${min}, got ${JSON.stringify(text ?? '')}`);
  return n;
}

interface Flags {
  positional: string[];
  values: Map<string, string>;
}

const SHORT: Readonly<Record<string, string>> = { '-n': '--namespace', '-o': '--output', '-t': '--timeout' };
const longFlag = (flag: string): string => SHORT[flag] ?? flag;

/** `--flag value`, `--flag=value`, `-n value`; `valued` are the flags that take a value, `bare` those that may stand alone. */
function splitFlags(args: readonly string[], valued: readonly string[], bare: readonly string[]): Flags {
  const positional: string[] = [];
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (!a.startsWith('-') || a === '-') {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const flag = longFlag(eq < 0 ? a : a.slice(0, eq));
    const inline = eq < 0 ? undefined : a.slice(eq + 1);
    if (bare.includes(flag) && inline === undefined) values.set(flag, 'true');
    else if (valued.includes(flag) || bare.includes(flag)) {
      const value = inline ?? args[++i];
      if (value === undefined) fail(`${flag} needs a value`);
      values.set(flag, value ?? '');
    } else fail(`unknown argument ${JSON.stringify(a)}`);
  }
  return { positional, values };
}

/** The flags every subcommand takes. */
const COMMON = ['--namespace', '--context'] as const;

function target(op: string, f: Flags): RolloutTarget {
  if (f.positional.length !== 1) fail(`ebb rollout ${op} takes one App (app/NAME), got ${f.positional.length}`);
  const namespace = f.values.get('--namespace');
  if (namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) fail(`${JSON.stringify(namespace)} is not a namespace name`);
  const context = f.values.get('--context');
  if (context === '') fail('--context needs a context name');
  return { name: parseTarget(f.positional[0] ?? ''), namespace, context };
}

function explainArgs(rest: readonly string[]): RolloutArgs {
  const f = splitFlags(rest, [...COMMON, '--output', '--queue-timeout'], []);
  const output = f.values.get('--output') ?? 'text';
  if (output !== 'text' && output !== 'json') return fail(`--output is text or json, got ${JSON.stringify(output)}`);
  const text = f.values.get('--queue-timeout');
  const queueTimeoutMs = text === undefined ? QUEUE_TIMEOUT_DEFAULT_MS : parseDuration(text);
  if (queueTimeoutMs === undefined || queueTimeoutMs < 1000 || queueTimeoutMs > QUEUE_TIMEOUT_MAX_MS)
    fail(`--queue-timeout must be a duration from 1s to ${formatDuration(QUEUE_TIMEOUT_MAX_MS)} (like 3s, 30s), got ${JSON.stringify(text)}`);
  return { op: 'explain', ...target('explain', f), output, queueTimeoutMs: queueTimeoutMs ?? QUEUE_TIMEOUT_DEFAULT_MS };
}

function statusArgs(rest: readonly string[]): RolloutArgs {
  const f = splitFlags(rest, [...COMMON, '--timeout'], ['--watch', '-w']);
  const timeoutText = f.values.get('--timeout');
  let timeoutMs: number | undefined;
  if (timeoutText !== undefined && timeoutText !== '0' && timeoutText !== '0s') {
    timeoutMs = parseDuration(timeoutText);
    if (timeoutMs === undefined || timeoutMs < 1000 || timeoutMs > TIMEOUT_MAX_MS)
      fail(`--timeout must be a duration from 1s to ${formatDuration(TIMEOUT_MAX_MS)} (like 90s, 5m) or 0 for none, got ${JSON.stringify(timeoutText)}`);
  }
  const watchText = f.values.get('--watch') ?? f.values.get('-w') ?? 'true';
  if (watchText !== 'true' && watchText !== 'false') fail(`--watch is true or false, got ${JSON.stringify(watchText)}`);
  return { op: 'status', ...target('status', f), timeoutMs, watch: watchText === 'true' };
}

function promoteArgs(rest: readonly string[]): RolloutArgs {
  const f = splitFlags(rest, COMMON, ['--full']);
  const full = f.values.get('--full') ?? 'false';
  if (full !== 'true' && full !== 'false') fail(`--full is true or false, got ${JSON.stringify(full)}`);
  return { op: 'promote', ...target('promote', f), full: full === 'true' };
}

const SIMPLE_OPS = ['pause', 'resume', 'restart', 'abort', 'retry'] as const;
type SimpleOp = (typeof SIMPLE_OPS)[number];
/** Subcommands taking only the App and -n. */
const isSimpleOp = (op: string | undefined): op is SimpleOp => (SIMPLE_OPS as readonly (string | undefined)[]).includes(op);

/** Pure: `ebb rollout` arguments → what to do. Throws UsageError (exit code 2) on anything else. */
export function parseRolloutArgs(args: readonly string[]): RolloutArgs {
  const [op, ...rest] = args;
  if (isSimpleOp(op)) return { op, ...target(op, splitFlags(rest, COMMON, [])) };
  switch (op) {
    case 'help':
    case '--help':
    case '-h':
      return { op: 'help' };
    case 'status':
      return statusArgs(rest);
    case 'promote':
      return promoteArgs(rest);
    case 'undo': {
      const f = splitFlags(rest, [...COMMON, '--to-revision'], []);
      const text = f.values.get('--to-revision');
      return { op, ...target(op, f), toRevision: text === undefined ? 0 : wholeNumber(text, '--to-revision', 0) };
    }
    case 'history': {
      const f = splitFlags(rest, [...COMMON, '--revision'], []);
      const text = f.values.get('--revision');
      return { op, ...target(op, f), revision: text === undefined ? 0 : wholeNumber(text, '--revision', 0) };
    }
    case 'explain':
      return explainArgs(rest);
    case undefined:
      return fail('ebb rollout needs a subcommand');
    default:
      return fail(`unknown subcommand ${JSON.stringify(op)}`);
  }
}
