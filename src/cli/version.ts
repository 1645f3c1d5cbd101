import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The package.json at the project root (this file lives in src/cli or dist/cli). */
const PACKAGE_JSON = join(import.meta.dirname, '..', '..', 'package.json');

export async function readVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(PACKAGE_JSON, 'utf8')) as { version: string };
  return pkg.version;
}

export async function versionCommand(): Promise<number> {
  process.stdout.write(`ebb ${await readVersion()} (node ${process.versions.node})\n`);
  return 0;
}
