/**
 * Helpers of the real-node tests: the real nodes and their registry, App templates pinned to the first, HTTP on pod
 * IPs, and waits on pod conditions (every wait polls the apiserver; nothing sleeps a fixed time).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { appRef } from '../../src/api/group.ts';
import { Label } from '../../src/api/keys.ts';
import { waitFor } from '../../src/common/wait.ts';
import { core } from '../../src/kube/paths.ts';
import type { Pod } from '../../src/kube/types.ts';
import { realNodeName, type RealNode } from '../../harness/sandbox/real-node/real-nodes.ts';
import { REAL_NODE_LABEL } from '../../harness/sandbox/real-node/kubelet.ts';
import { SANDBOX_IMAGES, buildProgramImage } from '../../harness/sandbox/real-node/images.ts';
import { pushImage } from '../../harness/sandbox/real-node/oci-image.ts';
import { parseAccessLog, type AccessLogEntry } from '../../harness/sandbox/real-node/registry.ts';
import { sandbox } from '../integration/support.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** JSON-encoded RealNode[]. */
    realNodes: string;
    /** `127.0.0.1:<port>` of the sandbox registry. */
    registry: string;
    /** The registry's log file (its access log included). */
    registryLog: string;
  }
}

/** The real nodes of the run (the layer starts two). */
export function realNodes(): RealNode[] {
  return JSON.parse(inject('realNodes')) as RealNode[];
}

/** The first real node: where `onRealNode` pins pods. */
export function realNode(): RealNode {
  const node = realNodes()[0];
  if (!node) throw new Error('no real node was provided');
  return node;
}

/** `<registry>/ebb/app:<tag>`: the HTTP server image (answers its version on GET /). */
export const appImage = (tag: 'v1' | 'v2' | 'v3'): string => `${inject('registry')}/ebb/app:${tag}`;

/** Every request the sandbox registry has served, oldest first. */
export async function registryRequests(): Promise<AccessLogEntry[]> {
  return parseAccessLog(await readFile(inject('registryLog'), 'utf8'));
}

/** Pins pods to real node `i` (the scheduler places them). */
export const onRealNodeAt = (i: number): { nodeSelector: Record<string, string> } => ({
  nodeSelector: { [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value, 'kubernetes.io/hostname': realNodeName(i) },
});

/** Pins pods to the first real node (what `realNode()` names). */
export const onRealNode = onRealNodeAt(0);

type Container = Record<string, unknown> & { name: string; image: string };

/** The main container: the app at `tag`, Ready once /healthz answers. */
export function mainContainer(tag: 'v1' | 'v2' | 'v3', extra: Record<string, unknown> = {}): Container {
  return { name: 'main', image: appImage(tag), readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 }, ...extra };
}

/** A sidecar: the app at v3 on port 8081. */
export const sidecar = (): Container => ({ name: 'side', image: appImage('v3'), env: [{ name: 'PORT', value: '8081' }] });

/** An App template for the real node. */
export function realTemplate(app: string, containers: Container[]): AppSpec['template'] {
  return { metadata: { labels: { app } }, spec: { ...onRealNode, containers, terminationGracePeriodSeconds: 1 } };
}

/** GET http://<ip>:<port><path>; the body, trimmed. */
export async function httpGet(ip: string, port: number, path = '/'): Promise<string> {
  const res = await fetch(`http://${ip}:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
  const body = await res.text();
  if (!res.ok) throw new Error(`GET ${ip}:${port}${path}: ${res.status}`);
  return body.trim();
}

/** Waits until GET / on the pod answers `want` (a restarted container takes a moment to listen). */
export async function waitForAnswer(ip: string, want: string, port = 8080): Promise<void> {
  await waitFor(async () => ((await httpGet(ip, port)) === want ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: `${ip}:${port} answering ${want}`,
  });
}

export async function getPod(ns: string, name: string): Promise<Pod> {
  return sandbox().rest.get<Pod>(core('pods', ns, name));
}

/** Polls the pod until `check` holds. */
export async function podUntil(ns: string, name: string, check: (p: Pod) => boolean, what: string, timeoutMs = 60_000): Promise<Pod> {
  let last: Pod | undefined;
  try {
    return await waitFor(
      async () => {
        last = await getPod(ns, name);
        return check(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 200, what: `${ns}/${name}: ${what}` },
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last status ${JSON.stringify(last?.status)}`);
  }
}

export const isReady = (p: Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export const containerStatus = (p: Pod, name: string) => p.status?.containerStatuses?.find((c) => c.name === name);

/**
 * Deletes App `name` and its pods, and waits until the pods are gone from the node. The pods are deleted
 * directly: the garbage collector would too, but only after it has discovered the App resource (up to its
 * 30 s discovery period after the CRD appeared).
 */
export async function deleteApp(ns: string, name: string): Promise<void> {
  const { rest } = sandbox();
  await rest.delete(appRef(ns, name), { propagationPolicy: 'Background' });
  const pods = async (): Promise<Pod[]> => (await rest.list<Pod>(core('pods', ns), { labelSelector: `${Label.app}=${name}` })).items;
  for (const p of await pods()) await rest.delete(core('pods', ns, p.metadata.name), { uid: p.metadata.uid }).catch(() => undefined);
  await waitFor(async () => ((await pods()).length === 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, what: `pods of App ${ns}/${name} gone` });
}

/**
 * Pushes the app at v2 with a marker file of its own, as a repository of its own: its layer is new to the node
 * (a pull downloads it) and its manifest requests are the caller's alone.
 */
export async function pushFresh(): Promise<{ repo: string; ref: string }> {
  const registry = inject('registry');
  const repo = `ebb/warm-${randomBytes(3).toString('hex')}`;
  const spec = SANDBOX_IMAGES.find((s) => s.repo === 'ebb/app' && s.tag === 'v2');
  if (!spec) throw new Error('no ebb/app:v2 image');
  const image = await buildProgramImage(spec, { marker: repo });
  await pushImage(`http://${registry}`, { repo, tag: 'v2' }, image, { signal: AbortSignal.timeout(30_000) });
  return { repo, ref: `${registry}/${repo}:v2` };
}
