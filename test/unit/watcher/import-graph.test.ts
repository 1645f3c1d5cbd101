import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = (path: string): string => fileURLToPath(new URL(`../../../src/${path}`, import.meta.url));

/** The packages a fresh Node process resolves while importing `modules`. */
function packagesLoadedBy(modules: string[]): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(spec, ctx, next) { seen.add(spec); return next(spec, ctx); } });
    for (const m of ${JSON.stringify(modules)}) await import(m);
    process.stdout.write(JSON.stringify([...seen]));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
}

describe('what `ebb watcher` loads', () => {
  it('leaves out client-node, Bull Board, gRPC and the sandbox until they are needed', () => {
    const seen = packagesLoadedBy([src('cli/commands.ts'), src('cli/processes.ts'), src('watcher/config.ts'), src('watcher/watcher.ts')]);
    expect(seen).toContain('bullmq');
    const heavy = ['@kubernetes/client-node', '@bull-board/', '@grpc/', 'hono', '/sandbox/sandbox.ts', '/workers/reconcilers.ts'];
    expect(seen.filter((s) => heavy.some((h) => s.includes(h)))).toEqual([]);
  });
});
