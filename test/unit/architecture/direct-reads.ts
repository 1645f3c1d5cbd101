import ts from 'typescript';

/**
 * The lines of `text` that read property `name` of a value: `x.name`, `x?.name`, `x['name']`, or a destructuring
 * `{ name }`. Types (`T['name']`), object literals that write it (`{ name: … }`) and members of a constant
 * object named in PascalCase (`UpdateStrategyType.name`, `Reason.name`: values that share the name) are not reads.
 */
export function propertyReads(fileName: string, text: string, name: string): number[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lines: number[] = [];
  const at = (node: ts.Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === name) {
      if (!(ts.isIdentifier(node.expression) && /^[A-Z]/.test(node.expression.text))) lines.push(at(node.name));
    } else if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text === name) {
      lines.push(at(node.argumentExpression));
    } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const key = node.propertyName ?? node.name;
      if (ts.isIdentifier(key) && key.text === name) lines.push(at(key));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

/**
 * What breaks a ratchet of reads per file (`{ file: count }`): a file reading more than listed (a file not
 * listed may read none), and a file reading fewer than listed (lower the count, so the list stays true).
 */
export function readProblems(found: Map<string, number[]>, ratchet: Readonly<Record<string, number>>, what: string): string[] {
  const problems: string[] = [];
  for (const [file, lines] of [...found].sort()) {
    const listed = ratchet[file] ?? 0;
    if (lines.length > listed) problems.push(`${file} reads ${what} directly ${lines.length} times (${listed} allowed): lines ${lines.join(', ')}`);
  }
  for (const [file, listed] of Object.entries(ratchet)) {
    const count = found.get(file)?.length ?? 0;
    if (count < listed) problems.push(`${file} now reads ${what} directly ${count} times, not ${listed}: lower its count in the ratchet list`);
  }
  return problems;
}
