import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { waitFor } from '../../src/common/wait.ts';
import type { KubeRest } from '../../src/kube/rest.ts';

interface Crd {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

const crdRef = (name?: string): { group: string; version: string; resource: string; name?: string } => ({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  name,
});

/** Server-side applies every CustomResourceDefinition in `dir` and waits until each is Established. */
export async function installCrds(rest: KubeRest, dir: string, signal?: AbortSignal): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  const names: string[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as (Crd & { kind?: string }) | null;
      if (!obj || obj.kind !== 'CustomResourceDefinition') continue;
      await rest.apply(crdRef(obj.metadata.name), obj, 'ebb-sandbox', true, signal);
      names.push(obj.metadata.name);
    }
  }
  for (const name of names) {
    await waitFor(
      async () => {
        const crd = await rest.get<Crd>(crdRef(name), signal);
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, signal, what: `CRD ${name} Established` },
    );
  }
  return names;
}
