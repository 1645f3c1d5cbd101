import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { floorProblems, type Floors } from './floors.ts';
import { importsOf } from './import-graph.ts';

const trees: string[] = [];
afterEach(() => {
  for (const dir of trees.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tree of files in a temporary folder. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'floors-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A small App-like folder: the roof imports its rooms, `b` uses `a`, and `b/x.ts` leans on the roof's types. */
const HOUSE = {
  'app/plan.ts': "import { a } from './a/a.ts';\nimport { b } from './b/b.ts';\nexport const plan = [a, b];\n",
  'app/types.ts': 'export interface T { n: number }\n',
  'app/a/a.ts': 'export const a = 1;\n',
  'app/b/b.ts': "import { a } from '../a/a.ts';\nexport const b = a;\n",
  'app/b/x.ts': "import type { T } from '../types.ts';\nexport const x: T = { n: 1 };\n",
};

const FLOORS: Floors = {
  cycles: [],
  rooms: { folder: 'app', allowed: ['b → a'], backArrows: ['app/b/x.ts → app/types.ts'] },
  reachIn: { folder: 'app', open: ['app/a/'], files: [] },
  gates: { 'app/a/a.ts': ['app/b/', 'app/plan.ts'] },
  direct: { property: 'rollingUpdate', resolver: 'app/a/a.ts', reads: {} },
};

describe('the floors checker', () => {
  it('passes a house that keeps its floors', () => {
    expect(floorProblems(tree(HOUSE), FLOORS)).toEqual({ cycles: [], rooms: [], reachIn: [], gates: [], reads: [] });
  });

  it('fails on a planted back-arrow, naming the import', () => {
    const root = tree({ ...HOUSE, 'app/a/a.ts': "import type { T } from '../types.ts';\nexport const a = 1;\nexport type U = T;\n" });
    expect(floorProblems(root, FLOORS).rooms).toEqual(['new back-arrow (a room importing the roof): app/a/a.ts:1 → app/types.ts']);
  });

  it('fails when a listed back-arrow is gone but still listed', () => {
    const root = tree({ ...HOUSE, 'app/b/x.ts': 'export const x = { n: 1 };\n' });
    expect(floorProblems(root, FLOORS).rooms).toEqual(['back-arrow app/b/x.ts → app/types.ts is gone: remove it from the ratchet list']);
  });

  it('fails on a room arrow not on the allow-list, naming the import', () => {
    const root = tree({ ...HOUSE, 'app/a/y.ts': "export { b } from '../b/b.ts';\n" });
    const { rooms, cycles } = floorProblems(root, FLOORS);
    expect(rooms).toEqual(['room arrow a → b is not allowed: app/a/y.ts:1 → app/b/b.ts']);
    expect(cycles).toEqual([]);
  });

  it('fails on a file outside the folder reaching past its open floor, and on a listed file that no longer does', () => {
    const root = tree({ ...HOUSE, 'cli/c.ts': "import { a } from '../app/a/a.ts';\nimport { b } from '../app/b/b.ts';\nexport const c = [a, b];\n" });
    expect(floorProblems(root, FLOORS).reachIn).toEqual(['cli/c.ts reaches into app: cli/c.ts:2 → app/b/b.ts']);
    expect(floorProblems(root, { ...FLOORS, reachIn: { ...FLOORS.reachIn, files: ['cli/c.ts'] } }).reachIn).toEqual([]);
    expect(floorProblems(tree(HOUSE), { ...FLOORS, reachIn: { ...FLOORS.reachIn, files: ['cli/c.ts'] } }).reachIn).toEqual([
      'cli/c.ts no longer reaches into app: remove it from the ratchet list',
    ]);
  });

  it('fails on an import of a gated file by a file not listed for it, naming the import', () => {
    const root = tree({ ...HOUSE, 'app/c.ts': "import { a } from './a/a.ts';\nexport const c = a;\n" });
    expect(floorProblems(root, FLOORS).gates).toEqual(['app/a/a.ts may be imported only by app/b/, app/plan.ts: app/c.ts:1 → app/a/a.ts']);
  });

  it('fails on a planted cycle, naming the chain of files', () => {
    const root = tree({
      ...HOUSE,
      'app/a/a.ts': "import type { B } from './c.ts';\nexport const a = 1;\nexport type A = B;\n",
      'app/a/c.ts': "import { a } from './a.ts';\nexport type B = typeof a;\n",
    });
    expect(floorProblems(root, FLOORS).cycles).toEqual(['import cycle: app/a/a.ts → app/a/c.ts → app/a/a.ts']);
  });

  it('names the shortest chain of a cycle through three files, and a cycle that is only listed is reported gone', () => {
    const root = tree({
      'p.ts': "import { q } from './q.ts';\nexport const p = q;\n",
      'q.ts': "export const q = 1;\nexport const lazy = () => import('./r.ts');\n",
      'r.ts': "export * from './p.ts';\n",
    });
    const floors: Floors = { ...FLOORS, cycles: [['x.ts', 'y.ts']], rooms: { folder: 'none', allowed: [], backArrows: [] } };
    expect(floorProblems(root, floors).cycles).toEqual(['import cycle: p.ts → q.ts → r.ts → p.ts', 'cycle x.ts y.ts is gone: remove it from the ratchet list']);
    expect(floorProblems(root, { ...floors, cycles: [['r.ts', 'q.ts', 'p.ts']] }).cycles).toEqual([]);
  });

  it('counts reads of the resolved property outside the resolver, not its types, writes or a constant of the same name', () => {
    const root = tree({
      ...HOUSE,
      'app/b/s.ts': [
        "type R = { rollingUpdate?: { paused?: boolean } }['rollingUpdate'];",
        "const Kind = { rollingUpdate: 'RollingUpdate' };",
        'export const k = Kind.rollingUpdate;',
        'export const write = { rollingUpdate: { paused: true } };',
        'export const read = (s: { rollingUpdate?: { paused?: boolean } }): R => s.rollingUpdate;',
        "export const { rollingUpdate } = write; export const other = write['rollingUpdate'];",
      ].join('\n'),
    });
    expect(floorProblems(root, FLOORS).reads).toEqual(['app/b/s.ts reads rollingUpdate directly 3 times (0 allowed): lines 5, 6, 6']);
    expect(floorProblems(root, { ...FLOORS, direct: { ...FLOORS.direct, reads: { 'app/b/s.ts': 4 } } }).reads).toEqual([
      'app/b/s.ts now reads rollingUpdate directly 3 times, not 4: lower its count in the ratchet list',
    ]);
  });

  it('reads every kind of import: type-only, re-exports, dynamic imports and import types', () => {
    const text = [
      "import type { A } from './a.ts';",
      "export { b } from './b.ts';",
      "const c = await import('./c.ts');",
      "let d: import('./d.ts').D;",
      "import e from 'node:fs';",
    ].join('\n');
    expect(importsOf('f.ts', text)).toEqual([
      { spec: './a.ts', line: 1 },
      { spec: './b.ts', line: 2 },
      { spec: './c.ts', line: 3 },
      { spec: './d.ts', line: 4 },
    ]);
  });
});
