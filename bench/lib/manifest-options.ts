/**
 * The NODE_OPTIONS the deploy manifests give the watcher and the worker, read from deploy/components, so a
 * benchmark runs each process as an installation does and cannot drift from the manifests.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../harness/sandbox/paths.ts';

interface EnvVar {
  name?: string;
  value?: string;
}
interface Deployment {
  kind?: string;
  spec?: { template?: { spec?: { containers?: { env?: EnvVar[] }[] } } };
}

/** `NODE_OPTIONS` of the process's Deployment (empty when the manifest sets none). */
export function manifestNodeOptions(process: 'watcher' | 'worker'): string {
  const text = readFileSync(join(PROJECT_ROOT, 'deploy', 'components', `${process}.yaml`), 'utf8');
  for (const doc of parseAllDocuments(text)) {
    const d = doc.toJS() as Deployment | null;
    if (d?.kind !== 'Deployment') continue;
    for (const c of d.spec?.template?.spec?.containers ?? []) {
      const v = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      if (v !== undefined) return v;
    }
  }
  return '';
}
