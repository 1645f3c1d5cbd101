import { resolve } from 'node:path';

/** The options every command that starts a sandbox takes, for `parseArgs`. */
export const SANDBOX_OPTIONS = {
  dir: { type: 'string', default: '.sandbox' },
  nodes: { type: 'string', default: '3' },
} as const;

/** `--dir` as an absolute path and `--nodes` as a count, 0..200. */
export function sandboxArgs(values: { dir: string; nodes: string }): { dir: string; nodes: number } {
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 0 || nodes > 200) throw new Error(`--nodes must be an integer 0..200, got "${values.nodes}"`);
  return { dir: resolve(values.dir), nodes };
}
