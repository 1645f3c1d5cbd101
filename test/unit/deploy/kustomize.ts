/**
 * The manifests of a kustomization as `kubectl kustomize` renders them, for the fields deploy/ uses: resources
 * (files and kustomization directories, followed), `replacements` from a ConfigMap's data into fields of
 * selected objects, and local configuration (annotation `config.kubernetes.io/local-config`) left out of the
 * output. A kustomization field this reader does not apply throws instead of being skipped; the integration
 * install test renders the same directories with the real kubectl.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { isRecord } from '../../../src/common/guards.ts';

export const ROOT = resolve(import.meta.dirname, '../../..');

/** Fields of kustomization.yaml that change no container's command, arguments or environment. */
const HARMLESS_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'labels', 'commonLabels', 'resources', 'images']);
const APPLIED_FIELDS = new Set([...HARMLESS_FIELDS, 'replacements']);

export interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

interface Replacement {
  source: { kind: string; name: string; fieldPath: string };
  targets: { select: { kind: string; name?: string }; fieldPaths: string[] }[];
}

/** `spec.ingress.0.from.0.namespaceSelector.matchLabels.[kubernetes.io/metadata.name]` → its segments. */
export function fieldPath(path: string): string[] {
  return [...path.matchAll(/\[([^\]]+)\]|([^.[\]]+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

function getPath(node: unknown, path: string[]): unknown {
  return path.reduce<unknown>((at, key) => (Array.isArray(at) ? at[Number(key)] : isRecord(at) ? at[key] : undefined), node);
}

/** Sets an existing field (kustomize refuses a target path that does not exist, and so does this). */
function setPath(node: unknown, path: string[], value: unknown, where: string): void {
  const parent = getPath(node, path.slice(0, -1));
  const last = path.at(-1) ?? '';
  if (getPath(parent, [last]) === undefined) throw new Error(`${where}: no field ${path.join('.')} to replace`);
  if (Array.isArray(parent)) parent[Number(last)] = value;
  else if (isRecord(parent)) parent[last] = value;
}

function applyReplacements(docs: Manifest[], replacements: readonly Replacement[], where: string): void {
  for (const r of replacements) {
    const source = docs.find((d) => d.kind === r.source.kind && d.metadata.name === r.source.name);
    const value = getPath(source, fieldPath(r.source.fieldPath));
    if (value === undefined) throw new Error(`${where}: replacement source ${r.source.kind}/${r.source.name} ${r.source.fieldPath} not found`);
    for (const t of r.targets) {
      const targets = docs.filter((d) => d.kind === t.select.kind && (t.select.name === undefined || d.metadata.name === t.select.name));
      if (targets.length === 0) throw new Error(`${where}: replacement target ${t.select.kind}/${t.select.name ?? '*'} not found`);
      for (const d of targets) for (const p of t.fieldPaths) setPath(d, fieldPath(p), value, `${where}: ${d.kind}/${d.metadata.name}`);
    }
  }
}

const isLocalConfig = (d: Manifest): boolean => d.metadata.annotations?.['config.kubernetes.io/local-config'] === 'true';

/** Every document of the kustomization in `dir`, as the nested kustomizations render them, local config kept. */
function build(dir: string): Manifest[] {
  const file = join(dir, 'kustomization.yaml');
  const k = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const unknown = Object.keys(k).filter((f) => !APPLIED_FIELDS.has(f));
  if (unknown.length > 0) throw new Error(`${relative(ROOT, file)} uses ${unknown.join(', ')}: teach test/unit/deploy/kustomize.ts to apply it`);
  const docs = ((k['resources'] ?? []) as string[]).flatMap((r) => {
    const path = join(dir, r);
    if (statSync(path).isDirectory()) return build(path);
    return parseAllDocuments(readFileSync(path, 'utf8')).map((d) => d.toJSON() as Manifest);
  });
  applyReplacements(docs, (k['replacements'] ?? []) as Replacement[], relative(ROOT, file));
  return docs;
}

/** The objects `kubectl kustomize <dir>` outputs (`dir` relative to the project). */
export function kustomize(dir: string): Manifest[] {
  return build(resolve(ROOT, dir)).filter((d) => !isLocalConfig(d));
}
