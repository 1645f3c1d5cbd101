/**
 * Summarizes V8 `.cpuprofile` files (`node --cpu-prof`, e.g. `node bench/fleet.ts --cpu-prof DIR`): the top
 * functions by self time and by inclusive time (a function counted once per sample however deep it recurses),
 * and self time by module group (a package under node_modules, a directory of src/, Node's internals, the
 * garbage collector). Several files are summed (the workers of one run).
 *
 *   node bench/cpuprofile-summary.ts [--top 25] [--from-ms 0] [--to-ms <end>] FILE|DIR ...
 *
 * `--from-ms`/`--to-ms` keep the samples inside that window, in ms from each profile's start (`--to-ms 3000`:
 * process start-up and module loading).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, 'from-ms': { type: 'string', default: '0' }, 'to-ms': { type: 'string' } },
});
const TOP = Number(opt.top);
const FROM_US = Number(opt['from-ms']) * 1000;
const TO_US = opt['to-ms'] === undefined ? Number.POSITIVE_INFINITY : Number(opt['to-ms']) * 1000;

function files(paths: string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) => join(p, f))
      : [p],
  );
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const src = url.search(/\/(src|bench|harness)\//);
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '');
}

/** The module group a frame belongs to: a package, a src/ directory, node internals, or V8's own entries. */
function groupOf(f: CallFrame): string {
  if (!f.url) return f.functionName.startsWith('(') ? f.functionName : '(native)';
  const nm = f.url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = f.url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? '?');
  }
  if (f.url.startsWith('node:')) return 'node:internal';
  const src = /\/src\/([^/]+)\/(?:([^/]+)\/)?/.exec(f.url);
  if (src) return src[2] && !src[2].endsWith('.ts') ? `src/${src[1]}/${src[2]}` : `src/${src[1] ?? ''}`;
  return shortUrl(f.url);
}

const keyOf = (f: CallFrame): string => `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const groups = new Map<string, number>();
const groupsInclusive = new Map<string, number>();
let total = 0;
let wall = 0;
const add = (m: Map<string, number>, k: string, v: number): void => void m.set(k, (m.get(k) ?? 0) + v);

const list = files(positionals);
for (const file of list) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  wall += Math.min(p.endTime - p.startTime, TO_US) - Math.min(FROM_US, p.endTime - p.startTime);
  let t = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    // A sample's time is the gap to the next one (the last sample has none).
    const dt = p.timeDeltas[i + 1] ?? 0;
    if (t < FROM_US || t > TO_US) continue;
    const node = byId.get(p.samples[i] ?? -1);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    total += dt;
    add(self, keyOf(node.callFrame), dt);
    add(groups, groupOf(node.callFrame), dt);
    const seen = new Set<string>();
    const seenGroups = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)?.callFrame;
      if (!f) break;
      const k = keyOf(f);
      if (!seen.has(k)) {
        seen.add(k);
        add(inclusive, k, dt);
      }
      const g = groupOf(f);
      if (!seenGroups.has(g)) {
        seenGroups.add(g);
        add(groupsInclusive, g, dt);
      }
    }
  }
}

const pct = (v: number): string => `${((100 * v) / Math.max(1, total)).toFixed(1).padStart(5)} %`;
const secs = (v: number): string => `${(v / 1e6).toFixed(2).padStart(7)} s`;
function table(title: string, m: Map<string, number>, top = TOP): void {
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${secs(v)} ${pct(v)}  ${k}\n`);
}

process.stdout.write(`${list.length} profile(s), ${(wall / 1e6).toFixed(1)} s profiled, ${(total / 1e6).toFixed(2)} s on CPU (not idle)\n`);
table('self time by group', groups, 30);
table('inclusive time by group (a group counted once per sample)', groupsInclusive, 30);
table('self time by function', self);
table('inclusive time by function', inclusive);
