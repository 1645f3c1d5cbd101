/**
 * deploy/ with one of its opt-in components, as the real `kubectl kustomize` renders it from an overlay, and
 * the environment a rendered Deployment's process would get.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { DEFAULT_BIN_DIR, PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';

const run = promisify(execFile);

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
export interface Container {
  env?: EnvVar[];
  volumeMounts?: { name: string; mountPath: string }[];
  resources?: { limits?: { memory?: string } };
}
export interface PodSpec {
  serviceAccountName?: string;
  terminationGracePeriodSeconds?: number;
  containers?: Container[];
  volumes?: { name: string; secret?: { secretName: string }; configMap?: { name: string } }[];
}
export interface Manifest {
  kind: string;
  type?: string;
  metadata: { name: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec?: { replicas?: number; template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec } } & Record<string, unknown>;
}

/**
 * What a throwaway overlay of `resources` with `components` (paths relative to the project) renders to, by the
 * real `kubectl kustomize`.
 */
export async function renderOverlay(resources: string[], components: string[]): Promise<unknown[]> {
  const overlay = await mkdtemp(join(tmpdir(), 'ebb-overlay-'));
  try {
    const rel = (p: string): string => relative(overlay, join(PROJECT_ROOT, p));
    await writeFile(join(overlay, 'kustomization.yaml'), stringify({ resources: resources.map(rel), components: components.map(rel) }));
    const { stdout } = await run(join(DEFAULT_BIN_DIR, 'kubectl'), ['kustomize', overlay], { maxBuffer: 32 * 1024 * 1024 });
    return parseAllDocuments(stdout).map((d) => d.toJS() as unknown);
  } finally {
    await rm(overlay, { recursive: true, force: true });
  }
}

/** deploy/ with deploy/components/<component>. */
export async function renderWith(component: string): Promise<Manifest[]> {
  return (await renderOverlay(['deploy'], [`deploy/components/${component}`])) as Manifest[];
}

/** The object of `kind` named `name`; throws when the rendering has none. */
export function objectOf(objects: Manifest[], kind: string, name: string): Manifest {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} rendered`);
  return found;
}

/** A process's environment as the kubelet would give it, Secrets read from `secrets` (`<secret>/<key>`). */
export function envOf(objects: Manifest[], deployment: string, secrets: Record<string, string>): Record<string, string> {
  const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === deployment);
  const env: Record<string, string> = {};
  for (const v of d?.spec?.template?.spec?.containers?.[0]?.env ?? []) {
    const ref = v.valueFrom?.secretKeyRef;
    const value = ref ? secrets[`${ref.name}/${ref.key}`] : v.value;
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}
