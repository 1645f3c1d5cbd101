import { resolve } from 'node:path';
import { MAX_REAL_NODES } from '../sandbox/real-node/real-nodes.ts';

/** The options every command that starts a sandbox takes, for `parseArgs`. */
export const SANDBOX_OPTIONS = {
  dir: { type: 'string', default: '.sandbox' },
  nodes: { type: 'string', default: '3' },
  'real-nodes': { type: 'string', default: '0' },
} as const;

/** `--dir` as an absolute path, `--nodes` as a count, 0..200, and `--real-nodes` as a count, 0..MAX_REAL_NODES. */
export function sandboxArgs(values: { dir: string; nodes: string; 'real-nodes': string }): { dir: string; nodes: number; realNodes: number } {
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 0 || nodes > 200) throw new Error(`--nodes must be an integer 0..200, got "${values.nodes}"`);
  const realNodes = Number(values['real-nodes']);
  if (!Number.isInteger(realNodes) || realNodes < 0 || realNodes > MAX_REAL_NODES) {
    throw new Error(`--real-nodes must be an integer 0..${MAX_REAL_NODES}, got "${values['real-nodes']}"`);
  }
  return { dir: resolve(values.dir), nodes, realNodes };
}
