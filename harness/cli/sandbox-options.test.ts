import { describe, expect, it } from 'vitest';
import { sandboxArgs } from './sandbox-options.ts';

const args = (realNodes: string): ReturnType<typeof sandboxArgs> => sandboxArgs({ dir: '/tmp/sb', nodes: '3', 'real-nodes': realNodes });

describe('sandboxArgs', () => {
  it('takes 0 to 4 real nodes', () => {
    for (const n of [0, 1, 2, 3, 4]) expect(args(String(n)).realNodes).toBe(n);
  });

  it('refuses a count out of range or not a whole number', () => {
    for (const bad of ['5', '-1', '1.5', 'two']) expect(() => args(bad)).toThrow(/--real-nodes must be an integer 0\.\.4/);
  });
});
