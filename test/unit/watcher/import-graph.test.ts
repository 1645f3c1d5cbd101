import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = (path: string): string => fileURLToPath(new URL(`../../../src/${path}`, import.meta.url));
const HARNESS = pathToFileURL(fileURLToPath(new URL('../../../harness/', import.meta.url))).href;

/** A fresh Node process importing the CLI: a second or two on a quiet machine, far longer on a loaded one. */
const SPAWN_TIMEOUT_MS = 60_000;

/** The specifiers a fresh Node process resolves while importing `modules`, and the URLs they resolve to. */
async function loadedBy(modules: string[]): Promise<{ specifiers: string[]; urls: string[] }> {
  const script = `
    import { registerHooks } from 'node:module';
    const specifiers = new Set();
    const urls = new Set();
    registerHooks({ resolve(spec, ctx, next) { specifiers.add(spec); const r = next(spec, ctx); urls.add(r.url); return r; } });
    for (const m of ${JSON.stringify(modules)}) await import(m);
    process.stdout.write(JSON.stringify({ specifiers: [...specifiers], urls: [...urls] }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(stdout) as { specifiers: string[]; urls: string[] };
}

describe('what `ebb watcher` loads', () => {
  it(
    'leaves out client-node, Bull Board, gRPC and the harness until they are needed',
    async () => {
      const { specifiers, urls } = await loadedBy([src('cli/commands.ts'), src('cli/processes.ts'), src('watcher/config.ts'), src('watcher/watcher.ts')]);
      expect(specifiers).toContain('bullmq');
      const heavy = ['@kubernetes/client-node', '@bull-board/', '@grpc/', 'hono', '/workers/reconcilers.ts'];
      expect(specifiers.filter((s) => heavy.some((h) => s.includes(h)))).toEqual([]);
      expect(urls.filter((u) => u.startsWith(HARNESS))).toEqual([]);
    },
    SPAWN_TIMEOUT_MS,
  );
});

/** The relative specifiers of the static imports, re-exports and dynamic imports in `text`. */
function relativeImports(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1] ?? '');
}

describe('what the product imports', () => {
  it('nothing outside src/: no product file reaches into harness/, test/ or bench/', () => {
    const root = src('');
    const product = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(product).toContain(join('cli', 'main.ts'));
    const outside = product.flatMap((file) =>
      relativeImports(readFileSync(join(root, file), 'utf8'))
        .filter((spec) => !resolve(dirname(join(root, file)), spec).startsWith(root.endsWith(sep) ? root : root + sep))
        .map((spec) => `${file} imports ${spec} (${relative(root, resolve(dirname(join(root, file)), spec))})`),
    );
    expect(outside).toEqual([]);
  });
});
