/** `ebb set image ...`, parsed (pure). */
import { parseTarget } from '../rollout/args.ts';
import { UsageError } from '../usage.ts';
import type { ImageAssignment } from './image.ts';

export const SET_USAGE = `usage:
  ebb set image app/NAME CONTAINER=IMAGE [CONTAINER=IMAGE ...]  set the image of the named containers (init containers too)
CONTAINER * sets every container and init container. Takes -n/--namespace NS and --context NAME, as ebb rollout does.
Only the named containers change: other containers and fields stay as they are, and a container renamed or
moved meanwhile fails the write rather than receive another's image.
`;

export type SetArgs =
  { op: 'help' } | { op: 'image'; name: string; namespace: string | undefined; context: string | undefined; assignments: ImageAssignment[] };

const fail = (message: string): never => {
  throw new UsageError(message, SET_USAGE);
};

const CONTAINER_NAME = /^(\*|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$/;
const SHORT: Readonly<Record<string, string>> = { '-n': '--namespace' };

function assignment(text: string): ImageAssignment {
  const eq = text.indexOf('=');
  const container = text.slice(0, Math.max(0, eq));
  const image = text.slice(eq + 1);
  if (eq < 0) return fail(`${JSON.stringify(text)} is not CONTAINER=IMAGE`);
  if (!CONTAINER_NAME.test(container)) return fail(`${JSON.stringify(container)} is not a container name`);
  if (image.length === 0 || /\s/.test(image) || image.length > 1024) return fail(`${JSON.stringify(image)} is not an image reference`);
  return { container, image };
}

/** `-n NS`, `--namespace=NS`, `--context C`; everything else positional. */
function splitArgs(rest: readonly string[]): { positional: string[]; values: Map<string, string> } {
  const positional: string[] = [];
  const values = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] ?? '';
    if (!a.startsWith('-')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const given = eq < 0 ? a : a.slice(0, eq);
    const flag = SHORT[given] ?? given;
    if (flag !== '--namespace' && flag !== '--context') fail(`unknown argument ${JSON.stringify(a)}`);
    const value = eq < 0 ? rest[++i] : a.slice(eq + 1);
    if (value === undefined || value === '') fail(`${flag} needs a value`);
    values.set(flag, value ?? '');
  }
  return { positional, values };
}

function assignments(pairs: readonly string[]): ImageAssignment[] {
  if (pairs.length === 0) fail('ebb set image needs at least one CONTAINER=IMAGE');
  const list = pairs.map(assignment);
  const names = list.map((a) => a.container);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) fail(`container ${JSON.stringify(twice)} is named twice`);
  return list;
}

export function parseSetArgs(args: readonly string[]): SetArgs {
  const [op, ...rest] = args;
  if (op === 'help' || op === '--help' || op === '-h') return { op: 'help' };
  if (op !== 'image') return fail(op === undefined ? 'ebb set needs a subcommand' : `unknown subcommand ${JSON.stringify(op)} (only image)`);
  const { positional, values } = splitArgs(rest);
  const [target, ...pairs] = positional;
  if (target === undefined || target.includes('=')) return fail('ebb set image takes an App (app/NAME) first');
  const namespace = values.get('--namespace');
  if (namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) fail(`${JSON.stringify(namespace)} is not a namespace name`);
  return { op: 'image', name: parseTarget(target), namespace, context: values.get('--context'), assignments: assignments(pairs) };
}
