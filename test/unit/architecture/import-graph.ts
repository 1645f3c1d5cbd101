import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of a file of the tree: `from` and `to` are paths relative to the tree's root, with `/`. */
export interface Arrow {
  from: string;
  line: number;
  to: string;
  /** The specifier as written. */
  spec: string;
}

/** A file's relative specifiers: static imports (`import type` too), re-exports, dynamic `import()`s, each with its line. */
export function importsOf(fileName: string, text: string): { spec: string; line: number }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: { spec: string; line: number }[] = [];
  const add = (literal: ts.Node): void => {
    if (!ts.isStringLiteralLike(literal) || !literal.text.startsWith('.')) return;
    found.push({ spec: literal.text, line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The `.ts` files under `root` (relative, with `/`), tests (`*.test.ts`) left out: they are not the product. */
export function sourceFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .map((f) => f.split(sep).join('/'))
    .sort();
}

/**
 * Every arrow between files of the tree at `root`. A specifier that resolves outside the tree, or to no `.ts`
 * file (a `.json`, a `.proto`), is not an arrow of this graph.
 */
export function readGraph(root: string): Arrow[] {
  const arrows: Arrow[] = [];
  for (const from of sourceFiles(root)) {
    const abs = join(root, from);
    for (const { spec, line } of importsOf(abs, readFileSync(abs, 'utf8'))) {
      const target = resolveTs(resolve(dirname(abs), spec));
      if (target === undefined) continue;
      const to = relative(root, target).split(sep).join('/');
      if (to.startsWith('../')) continue;
      arrows.push({ from, line, to, spec });
    }
  }
  return arrows;
}

function resolveTs(path: string): string | undefined {
  const candidates = path.endsWith('.ts') ? [path] : path.endsWith('.js') ? [path.slice(0, -3) + '.ts'] : [`${path}.ts`, join(path, 'index.ts')];
  return candidates.find((c) => existsSync(c));
}
