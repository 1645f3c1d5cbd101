import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../sandbox/paths.ts';

export async function readVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export async function versionCommand(): Promise<number> {
  process.stdout.write(`ebb ${await readVersion()} (node ${process.versions.node})\n`);
  return 0;
}
