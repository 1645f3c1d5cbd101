/** Renders the CRDs as the files committed under deploy/crds (written by `make crds`, checked by a unit test). */
import { stringify } from 'yaml';
import { allCrds } from './crds.ts';

export const CRD_DIR = 'deploy/crds';

const HEADER = '# Generated from src/api by hack/gen-crds.ts. Do not edit: change the schemas and run `make crds`.\n';

function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false });
}

/** File name (relative to deploy/crds) → content. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const names: string[] = [];
  for (const crd of allCrds()) {
    const file = `${crd.metadata.name}.yaml`;
    names.push(file);
    files.set(file, HEADER + toYaml(crd));
  }
  const kustomization = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: names };
  files.set('kustomization.yaml', HEADER + toYaml(kustomization));
  return files;
}
