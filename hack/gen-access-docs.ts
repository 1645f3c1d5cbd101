/** Rewrites the access table in docs/install.md from test/unit/deploy/access.ts. Run with `make access-docs`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withAccessTable } from '../test/unit/deploy/access.ts';

const readme = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'docs', 'install.md');
const before = readFileSync(readme, 'utf8');
const after = withAccessTable(before);
if (after === before) console.log('docs/install.md: access table is up to date');
else {
  writeFileSync(readme, after);
  console.log('docs/install.md: access table rewritten');
}
