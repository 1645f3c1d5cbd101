/**
 * Helpers of the install test: kubectl against the sandbox, the manifests as `kubectl kustomize` renders them,
 * service-account tokens and kubeconfigs made of them, and the access review of one row of the access table.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { KubeRest, loadKubeConfig } from '../../../src/kube/rest.ts';
import type { Resource } from '../../unit/deploy/access.ts';

const KUBECTL = join(PROJECT_ROOT, 'bin', 'kubectl');
const run = promisify(execFile);

export const NAMESPACE = 'ebb-system';
/** The node daemon's namespace (it needs a hostPath volume, which ebb-system's Pod Security level refuses). */
export const DAEMON_NAMESPACE = 'ebb-node';

/** The kinds of deploy/ that are not namespaced. */
export const CLUSTER_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<
  string,
  unknown
>;

/** Runs kubectl with the sandbox's admin kubeconfig; resolves with its stdout, rejects with its stderr. */
export function kubectlFor(kubeconfig: string, signal: AbortSignal): (...args: string[]) => Promise<string> {
  return async (...args) => {
    try {
      return (await run(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 32 * 1024 * 1024, signal })).stdout;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? '';
      throw new Error(`kubectl ${args.join(' ')}: ${stderr || String(err)}`);
    }
  };
}

/** `kubectl kustomize <dir>` (relative to the project), as objects. */
export async function render(kubectl: (...args: string[]) => Promise<string>, dir: string): Promise<Manifest[]> {
  return parseAllDocuments(await kubectl('kustomize', join(PROJECT_ROOT, dir))).map((d) => d.toJS() as Manifest);
}

/** Writes objects as a YAML stream of JSON documents: nothing in them can change meaning between YAML 1.1 and 1.2 (`yes`). */
export function writeManifests(file: string, objects: readonly Manifest[]): Promise<void> {
  return writeFile(file, objects.map((o) => JSON.stringify(o)).join('\n---\n'));
}

export const nameOf = (o: Manifest): string => `${o.kind}/${o.metadata.name}`;

/** A kubeconfig file that authenticates to the sandbox apiserver with `token` (the admin's cluster and CA). */
export async function tokenKubeconfig(adminKubeconfig: string, token: string, file: string): Promise<string> {
  const admin = parse(await readFile(adminKubeconfig, 'utf8')) as { clusters: unknown[]; contexts: { context: { cluster: string } }[] };
  const cluster = admin.contexts[0]?.context.cluster;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: admin.clusters,
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster, user: 'sa' } }],
    'current-context': 'sa',
  };
  await writeFile(file, stringify(doc), { mode: 0o600 });
  return file;
}

export const clientOf = (kubeconfig: string): KubeRest => new KubeRest(loadKubeConfig(kubeconfig));

/** Resources the access table names that are not namespaced. */
const CLUSTER_SCOPED = new Set(['imagelists', 'nodes']);

interface Review {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/**
 * What the token of `client` may do, asked with SelfSubjectAccessReviews: `verb` on `on`, for a namespaced
 * resource in all namespaces and in `namespace`, otherwise once; by scope ('*' is all namespaces).
 */
export async function accessOf(client: KubeRest, verb: string, on: Resource, namespace: string): Promise<Record<string, boolean>> {
  const scopes = CLUSTER_SCOPED.has(on.resource) ? [''] : ['', namespace];
  const answers = await Promise.all(
    scopes.map(async (ns) => {
      const review = await client.create<Review>(
        { group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews' },
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb, group: on.group, resource: on.resource, subresource: on.subresource ?? '', namespace: ns } },
        },
      );
      return [ns || '*', review.status?.allowed === true] as const;
    }),
  );
  return Object.fromEntries(answers);
}

interface Workload {
  spec: {
    template: { metadata: { labels: Record<string, string> }; spec: { volumes?: unknown[] } & Record<string, unknown> };
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}

/**
 * The pod a workload's controller would make from its template (a StatefulSet's adds a volume for each claim
 * template); named after the workload, in its namespace.
 */
export function podFromWorkload(workload: Manifest): Manifest {
  const { template, volumeClaimTemplates = [] } = (workload as unknown as Workload).spec;
  const claims = volumeClaimTemplates.map((c) => ({
    name: c.metadata.name,
    persistentVolumeClaim: { claimName: `${c.metadata.name}-${workload.metadata.name}-0` },
  }));
  const volumes = [...(template.spec.volumes ?? []), ...claims];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${workload.metadata.name}-0`,
      ...(workload.metadata.namespace ? { namespace: workload.metadata.namespace } : {}),
      labels: template.metadata.labels,
    },
    spec: { ...template.spec, ...(volumes.length > 0 ? { volumes } : {}) },
  };
}
