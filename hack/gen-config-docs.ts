/** Rewrites the configuration reference in docs/configuration.md from the settings tables. Run with `make config-docs`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withConfigReference } from '../src/cli/config-reference.ts';

const readme = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'docs', 'configuration.md');
const before = readFileSync(readme, 'utf8');
const after = withConfigReference(before);
if (after === before) console.log('docs/configuration.md: configuration reference is up to date');
else {
  writeFileSync(readme, after);
  console.log('docs/configuration.md: configuration reference rewritten');
}
