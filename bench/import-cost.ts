/**
 * What the watcher's code costs in memory before it does anything: the RSS and JS heap of a fresh Node
 * process after importing libraries, or ebb's own compiled modules, and two full GCs. Each variant runs in
 * its own process, `--runs` times (default 3); the median is printed.
 *
 *   npm run build && node bench/import-cost.ts [--runs 3]
 *
 * The `dist/` variants are skipped when there is no build.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../harness/sandbox/paths.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });

/** What `ebb watcher` always loads (scaler and board off). */
const CORE = ['bullmq', 'ioredis', 'pino', 'prom-client', 'undici', 'yaml'];
/** The KEDA scaler (on by default: EBB_SCALER=true, EBB_SCALER_PORT=9090). */
const SCALER = ['@grpc/grpc-js', '@grpc/proto-loader'];
/** Bull Board (on only on a loopback address or with credentials). */
const BOARD = ['@bull-board/api', '@bull-board/hono', 'hono', '@hono/node-server'];
/** Loaded only for a kubeconfig user with `exec` or `auth-provider`. */
const CLIENT_NODE = ['@kubernetes/client-node'];

/** The modules `dist/cli/main.js watcher` imports before it starts (main.js itself would run the command). */
const WATCHER_DIST = ['dist/cli/commands.js', 'dist/cli/processes.js', 'dist/watcher/config.js', 'dist/watcher/watcher.js'];

const VARIANTS: { name: string; imports: string[] }[] = [
  { name: 'bare node', imports: [] },
  { name: 'libraries ebb watcher loads with scaler and board off', imports: CORE },
  { name: '… + gRPC (KEDA scaler, on by default)', imports: [...CORE, ...SCALER] },
  { name: '… + gRPC + Bull Board', imports: [...CORE, ...SCALER, ...BOARD] },
  {
    name: '… + gRPC + Bull Board + @kubernetes/client-node (all libraries the watcher imported before)',
    imports: [...CORE, ...SCALER, ...BOARD, ...CLIENT_NODE],
  },
  { name: 'ebb watcher modules (dist/), scaler and board off', imports: WATCHER_DIST },
  { name: 'ebb watcher modules (dist/) + scaler', imports: [...WATCHER_DIST, 'dist/watcher/scaler.js'] },
  { name: 'ebb watcher modules (dist/) + scaler + board', imports: [...WATCHER_DIST, 'dist/watcher/scaler.js', 'dist/watcher/board.js'] },
];

/** The child: plain JavaScript (no TypeScript loader in the measured process). */
const CHILD = `
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
const [root, imports] = [process.argv[1], JSON.parse(process.argv[2])];
const require = createRequire(root + '/package.json');
for (const m of imports) await import(pathToFileURL(isAbsolute(m) ? m : require.resolve(m)).href);
globalThis.gc(); globalThis.gc();
const m = process.memoryUsage();
process.stdout.write(JSON.stringify({ rssMiB: m.rss / 2 ** 20, heapUsedMiB: m.heapUsed / 2 ** 20 }));
`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const runs = Number(args.runs);
for (const v of VARIANTS) {
  const imports = v.imports.map((m) => (m.startsWith('dist/') ? join(PROJECT_ROOT, m) : m));
  if (imports.some((m) => m.startsWith('/') && !existsSync(m))) {
    process.stdout.write(`${v.name}: skipped (no dist/, run npm run build)\n`);
    continue;
  }
  const samples = Array.from({ length: runs }, () => {
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, PROJECT_ROOT, JSON.stringify(imports)], {
      encoding: 'utf8',
    });
    return JSON.parse(out) as { rssMiB: number; heapUsedMiB: number };
  });
  const rss = median(samples.map((s) => s.rssMiB));
  const heap = median(samples.map((s) => s.heapUsedMiB));
  process.stdout.write(`${v.name}: RSS ${rss.toFixed(1)} MiB, JS heap used ${heap.toFixed(1)} MiB (median of ${runs})\n`);
}
