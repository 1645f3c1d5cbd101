/**
 * What the watcher's dependencies cost in memory before it does anything: the RSS and JS heap of a Node
 * process after importing the libraries `ebb watcher` loads, with some left out, each variant in a fresh
 * process (after two full GCs).
 *
 *   node bench/import-cost.ts
 */
import { execFileSync } from 'node:child_process';
import { PROJECT_ROOT } from '../src/sandbox/paths.ts';

const LIBRARIES = [
  'bullmq',
  'ioredis',
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  '@bull-board/api',
  '@bull-board/hono',
  'hono',
  '@hono/node-server',
  'pino',
  'prom-client',
  'undici',
  'yaml',
  '@kubernetes/client-node',
];

const VARIANTS: { name: string; without: string[] }[] = [
  { name: 'bare node', without: LIBRARIES },
  { name: 'all libraries the watcher imports', without: [] },
  { name: 'without @kubernetes/client-node', without: ['@kubernetes/client-node'] },
  {
    name: 'without client-node, Bull Board and gRPC (KEDA scaler)',
    without: ['@kubernetes/client-node', '@bull-board/api', '@bull-board/hono', '@grpc/grpc-js', '@grpc/proto-loader'],
  },
];

/** The child: plain JavaScript (no TypeScript loader in the measured process). */
const CHILD = `
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
const [root, libs] = [process.argv[1], JSON.parse(process.argv[2])];
const require = createRequire(root + '/package.json');
for (const lib of libs) await import(pathToFileURL(require.resolve(lib)).href);
globalThis.gc(); globalThis.gc();
const m = process.memoryUsage();
process.stdout.write(JSON.stringify({ rssMiB: m.rss / 2 ** 20, heapUsedMiB: m.heapUsed / 2 ** 20 }));
`;

for (const v of VARIANTS) {
  const libs = LIBRARIES.filter((l) => !v.without.includes(l));
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, PROJECT_ROOT, JSON.stringify(libs)], { encoding: 'utf8' });
  const m = JSON.parse(out) as { rssMiB: number; heapUsedMiB: number };
  process.stdout.write(`${v.name}: RSS ${m.rssMiB.toFixed(1)} MiB, JS heap used ${m.heapUsedMiB.toFixed(1)} MiB\n`);
}
