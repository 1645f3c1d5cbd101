import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { CONTAINERD_BIN } from './containerd.ts';
import { HTPASSWD_BIN, REGISTRY_BIN } from './registry.ts';

/** Fails the run at once, with the fix, when a Debian package the runtime tests start is missing. */
export default async function setup(): Promise<void> {
  const missing: string[] = [];
  for (const [bin, pkg] of [
    [CONTAINERD_BIN, 'containerd'],
    [REGISTRY_BIN, 'docker-registry'],
    [HTPASSWD_BIN, 'apache2-utils'],
  ] as const) {
    await access(bin, constants.X_OK).catch(() => missing.push(`${bin} (Debian package ${pkg})`));
  }
  if (missing.length > 0) throw new Error(`runtime tests need ${missing.join(', ')}: run \`make debs\``);
}
