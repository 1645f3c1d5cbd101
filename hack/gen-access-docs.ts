/** Rewrites the access table in README.md's install section from test/unit/deploy/access.ts. Run with `make access-docs`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withAccessTable } from '../test/unit/deploy/access.ts';

const readme = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'README.md');
const before = readFileSync(readme, 'utf8');
const after = withAccessTable(before);
if (after === before) console.log('README.md: access table is up to date');
else {
  writeFileSync(readme, after);
  console.log('README.md: access table rewritten');
}
