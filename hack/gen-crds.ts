/** Writes deploy/crds from the schemas in src/api. Run with `make crds` (or `npm run gen:crds`). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_DIR, renderCrdFiles } from '../src/api/crd-files.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, CRD_DIR);
mkdirSync(dir, { recursive: true });
for (const [file, content] of renderCrdFiles()) {
  writeFileSync(join(dir, file), content);
  console.log(`wrote ${join(CRD_DIR, file)}`);
}
