/** What the attack tests read from the install's own manifests, so they run ebb as it is deployed. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';

interface EnvVar {
  name?: string;
  value?: string;
}

/** The NODE_OPTIONS of the first container of `deploy/components/<component>.yaml` (its heap flags). */
export async function manifestNodeOptions(component: 'watcher' | 'worker'): Promise<string> {
  const text = await readFile(join(PROJECT_ROOT, 'deploy', 'components', `${component}.yaml`), 'utf8');
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: { env?: EnvVar[] }[] } } } } | null;
    if (obj?.kind !== 'Deployment') continue;
    for (const c of obj.spec?.template?.spec?.containers ?? []) {
      const value = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      if (value) return value;
    }
  }
  throw new Error(`deploy/components/${component}.yaml sets no NODE_OPTIONS`);
}
