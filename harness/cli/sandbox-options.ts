import { resolve } from 'node:path';

/** The options every command that starts a sandbox takes, for `parseArgs`. */
export const SANDBOX_OPTIONS = {
  dir: { type: 'string', default: '.sandbox' },
  nodes: { type: 'string', default: '3' },
  'real-nodes': { type: 'string', default: '0' },
} as const;

/** `--dir` as an absolute path, `--nodes` as a count, 0..200, and `--real-nodes` as 0 or 1 (one kubelet per machine). */
export function sandboxArgs(values: { dir: string; nodes: string; 'real-nodes': string }): { dir: string; nodes: number; realNodes: number } {
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 0 || nodes > 200) throw new Error(`--nodes must be an integer 0..200, got "${values.nodes}"`);
  const realNodes = Number(values['real-nodes']);
  if (realNodes !== 0 && realNodes !== 1) {
    throw new Error(`--real-nodes must be 0 or 1, got "${values['real-nodes']}": the kubelet uses fixed host paths, so one real node runs per machine`);
  }
  return { dir: resolve(values.dir), nodes, realNodes };
}
