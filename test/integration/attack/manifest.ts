/** What the attack tests read from the install's own manifests, so they run ebb as it is deployed. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';

interface Container {
  env?: { name?: string; value?: string }[];
  resources?: { limits?: { memory?: string } };
}

async function containers(component: 'watcher' | 'worker'): Promise<Container[]> {
  const text = await readFile(join(PROJECT_ROOT, 'deploy', 'components', `${component}.yaml`), 'utf8');
  const found: Container[] = [];
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: Container[] } } } } | null;
    if (obj?.kind === 'Deployment') found.push(...(obj.spec?.template?.spec?.containers ?? []));
  }
  return found;
}

/** The NODE_OPTIONS of `deploy/components/<component>.yaml`'s container (its heap flags). */
export async function manifestNodeOptions(component: 'watcher' | 'worker'): Promise<string> {
  for (const c of await containers(component)) {
    const value = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
    if (value) return value;
  }
  throw new Error(`deploy/components/${component}.yaml sets no NODE_OPTIONS`);
}

const UNITS: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** The memory limit of `deploy/components/<component>.yaml`'s container, in bytes (the cgroup's OOM line). */
export async function manifestMemoryLimitBytes(component: 'watcher' | 'worker'): Promise<number> {
  for (const c of await containers(component)) {
    const m = /^(\d+)(Ki|Mi|Gi)$/.exec(c.resources?.limits?.memory ?? '');
    if (m) return Number(m[1]) * (UNITS[m[2] ?? ''] ?? 1);
  }
  throw new Error(`deploy/components/${component}.yaml sets no memory limit in Ki, Mi or Gi`);
}

/** The peak resident set of a running process (Linux: VmHWM), in bytes. */
export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmHWM for pid ${pid}`);
  return Number(kb) * 1024;
}
