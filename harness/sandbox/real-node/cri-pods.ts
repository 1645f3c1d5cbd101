/**
 * Stops and removes every pod sandbox of a containerd through CRI, so its network namespaces, pod IPs and
 * mounts are released by containerd itself before it stops (the kubelet leaves pods running when it exits).
 */
import { join } from 'node:path';
import { credentials, loadPackageDefinition, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

interface PodSandbox {
  id: string;
  metadata?: { name: string; namespace: string };
}

type Unary<Req, Res> = (req: Req, opts: { deadline: number }, cb: (err: ServiceError | null, res: Res) => void) => void;

interface RuntimeClient {
  ListPodSandbox: Unary<Record<string, never>, { items: PodSandbox[] }>;
  StopPodSandbox: Unary<{ podSandboxId: string }, object>;
  RemovePodSandbox: Unary<{ podSandboxId: string }, object>;
  close(): void;
}

type RuntimeCtor = new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => RuntimeClient;

function runtimeClient(socket: string): RuntimeClient {
  const def = loadSync(join(import.meta.dirname, 'cri-pods.proto'), { keepCase: false, defaults: true });
  const pkg = loadPackageDefinition(def) as unknown as { runtime: { v1: { RuntimeService: RuntimeCtor } } };
  return new pkg.runtime.v1.RuntimeService(`unix://${socket}`, credentials.createInsecure());
}

function call<Req, Res>(fn: Unary<Req, Res>, client: RuntimeClient, req: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn.call(client, req, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** Stops and removes every pod sandbox; returns the `namespace/name` of each. */
export function removeAllPods(socket: string, timeoutMs = 30_000): Promise<string[]> {
  return removePods(socket, () => true, timeoutMs);
}

/** Stops and removes the pod sandboxes (and so their containers) that `pick` selects; returns the `namespace/name` of each. */
export async function removePods(socket: string, pick: (pod: { namespace: string; name: string }) => boolean, timeoutMs = 30_000): Promise<string[]> {
  const client = runtimeClient(socket);
  try {
    const { items } = await call(client.ListPodSandbox, client, {}, timeoutMs);
    const removed: string[] = [];
    for (const pod of items) {
      if (!pick({ namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' })) continue;
      await call(client.StopPodSandbox, client, { podSandboxId: pod.id }, timeoutMs);
      await call(client.RemovePodSandbox, client, { podSandboxId: pod.id }, timeoutMs);
      removed.push(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? pod.id}`);
    }
    return removed;
  } finally {
    client.close();
  }
}
