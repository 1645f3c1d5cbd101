/**
 * Helpers for integration tests. The global setup (global-setup.ts) starts one sandbox per run and provides
 * its kubeconfig path and Redis URL; each test works in a fresh namespace.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { KubeError } from '../../src/kube/errors.ts';
import { loadKubeConfig, KubeRest } from '../../src/kube/rest.ts';
import { core } from '../../src/kube/paths.ts';
import { waitFor } from '../../src/common/wait.ts';
import { imageListRef } from '../../src/api/group.ts';
import type { ImageList, ImageListEntry } from '../../src/api/image-list.ts';
import { createLogger } from '../../src/common/log.ts';
import { syncPullSecretCopies } from '../../src/workers/imagelist/pull-secrets.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    redisUrl: string;
    sandboxDir: string;
    /** JSON-encoded list of simulated node names. */
    nodeNames: string;
    /** Other files of the project may run at the same moment (leave-nothing-behind.ts). */
    filesInParallel: boolean;
  }
}

/** The namespaces this file made with freshNamespace (a module instance per test file). */
export const namespacesMade = new Set<string>();

let client: KubeRest | undefined;

/**
 * The bound of a test that tells one story of several rollouts and CLI processes, where the project's test
 * timeout (integration: 240 s) is the bound of one scenario: every wait inside still waits for a condition.
 */
export const LONG_SCENARIO_MS = 600_000;

export function sandbox(): { rest: KubeRest; kubeconfig: string; redisUrl: string; dir: string; nodeNames: string[] } {
  const kubeconfig = inject('kubeconfig');
  client ??= new KubeRest(loadKubeConfig(kubeconfig));
  return {
    rest: client,
    kubeconfig,
    redisUrl: inject('redisUrl'),
    dir: inject('sandboxDir'),
    nodeNames: JSON.parse(inject('nodeNames')) as string[],
  };
}

/**
 * Creates a namespace with a unique name and waits for its `default` ServiceAccount (the ServiceAccount
 * admission plugin rejects pods until the serviceaccount controller has made it); returns its name.
 */
export async function freshNamespace(prefix = 't'): Promise<string> {
  const { rest } = sandbox();
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  namespacesMade.add(name);
  await waitFor(() => rest.get(core('serviceaccounts', name, 'default')), { timeoutMs: 30_000, what: `ServiceAccount ${name}/default` });
  return name;
}

/** Resolves to the KubeError the request failed with; fails the test when the request succeeds. */
export async function rejection(request: Promise<unknown>): Promise<KubeError> {
  try {
    await request;
  } catch (err) {
    if (err instanceof KubeError) return err;
    throw err;
  }
  throw new Error('expected the apiserver to refuse the request, but it was accepted');
}

/** Creates a `kubernetes.io/dockerconfigjson` pull Secret `name` in `ns` holding `auths`. */
export async function createPullSecret(ns: string, name: string, auths: Record<string, { username: string; password: string }>): Promise<void> {
  await sandbox().rest.create(core('secrets', ns), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  });
}

/**
 * Copies the pull secrets that ImageList `node`'s entries name into `namespace`, with the worker's own code
 * (what the worker's ImageList reconcile does when pull secrets are enabled), for tests that run a daemon alone;
 * `images` copies for entries not written yet.
 */
export async function copyPullSecrets(node: string, namespace: string, images?: ImageListEntry[]): Promise<void> {
  const { rest } = sandbox();
  const stored = await rest.get<ImageList>(imageListRef(node));
  // `images`: the entries about to be written, so that the copies exist before the daemon sees them.
  const list = images ? { ...stored, spec: { images } } : stored;
  const signal = AbortSignal.timeout(30_000);
  await syncPullSecretCopies(node, list, namespace, { rest, log: createLogger('copies', 'warn'), signal, now: () => new Date() });
}
