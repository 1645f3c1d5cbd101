import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = (path: string): string => fileURLToPath(new URL(`../../../src/${path}`, import.meta.url));

/** A fresh Node process importing the CLI: a second or two on a quiet machine, far longer on a loaded one. */
const SPAWN_TIMEOUT_MS = 60_000;

/** The packages a fresh Node process resolves while importing `modules`. */
async function packagesLoadedBy(modules: string[]): Promise<string[]> {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(spec, ctx, next) { seen.add(spec); return next(spec, ctx); } });
    for (const m of ${JSON.stringify(modules)}) await import(m);
    process.stdout.write(JSON.stringify([...seen]));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(stdout) as string[];
}

describe('what `ebb daemon` loads', () => {
  it(
    'leaves out Redis, BullMQ, Bull Board, client-node, the reconcilers and the sandbox',
    async () => {
      const seen = await packagesLoadedBy([src('cli/commands.ts'), src('cli/processes.ts'), src('daemon/daemon.ts'), src('daemon/cri-adapter.ts')]);
      expect(seen).toContain('@grpc/grpc-js');
      const heavy = ['bullmq', 'ioredis', '@kubernetes/client-node', '@bull-board/', 'hono', '/sandbox/sandbox.ts', '/sandbox/node/', '/workers/', '/queue/'];
      expect(seen.filter((s) => heavy.some((h) => s.includes(h)))).toEqual([]);
    },
    SPAWN_TIMEOUT_MS,
  );
});
