/**
 * Keeping the pull benchmark's padded image off the real node: removed through CRI (every reference of its
 * image ID) and checked gone from containerd's image list and content store, so the next pull downloads it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { imageListRef } from '../../src/api/group.ts';
import { sleep, waitFor } from '../../src/common/wait.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import type { OciImage } from '../../harness/sandbox/real-node/oci-image.ts';
import { imageOf, isReady, type PodTimeline } from './pod-timeline.ts';
import type { RealEnv } from './realnode-env.ts';

const exec = promisify(execFile);
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);

/** Removes every reference of the padded image's ID from the node's containerd and checks it is gone. */
export async function makeAbsent(env: RealEnv, pad: OciImage, signal: AbortSignal): Promise<void> {
  // No ImageList entry left from an earlier side may make the daemon pull it back.
  await env.rest.delete(imageListRef(env.node.name)).catch((err: unknown) => {
    if (!isKubeError(err, 'NotFound')) throw err;
  });
  await removeFromNode(env, pad, signal);
  if ((await env.cri.listImages({ signal })).some((img) => img.id === pad.id)) throw new Error(`${pad.id} still on the node after RemoveImage`);
  // The layer's bytes must be gone from containerd's content store too, or the next pull downloads nothing.
  const ctr = async (...args: string[]): Promise<string> => (await exec('ctr', ['-a', env.node.criSocket, '-n', 'k8s.io', ...args], { signal })).stdout;
  const t0 = Date.now();
  const present = async (): Promise<boolean> => (await ctr('content', 'ls', '-q')).includes(pad.layer.digest);
  const gone = await waitFor(async () => ((await present()) ? undefined : true), { timeoutMs: 30_000, intervalMs: 250, signal, what: 'layer gone' }).catch(
    () => false,
  );
  if (!gone) {
    // Reported, not hidden: the side's layer fetches will show whether its pull downloaded anything.
    const layer = (await ctr('content', 'ls')).split('\n').find((l) => l.includes(pad.layer.digest));
    progress(
      `layer still in the content store 30 s after RemoveImage: ${layer ?? ''}; images: ${await ctr('images', 'ls', '-q')}; leases: ${await ctr('leases', 'ls')}`,
    );
  } else if (Date.now() - t0 > 300) progress(`layer left the content store ${Date.now() - t0} ms after RemoveImage`);
}

export async function removeFromNode(env: RealEnv, pad: OciImage, signal: AbortSignal): Promise<void> {
  for (const img of await env.cri.listImages({ signal })) if (img.id === pad.id) await env.cri.removeImage(img.id, { signal });
}

/**
 * --cold-per-pod: each time one more pod runs `image` and is Ready (its turn is over), the image is removed
 * from the node again, so the next pod's turn finds it absent and its pull downloads the layer again (the
 * running containers keep their snapshots, so containerd may have less to unpack). Returns the removals made.
 */
export async function evictEachTurn(env: RealEnv, pad: OciImage, timeline: PodTimeline, image: string, done: AbortSignal): Promise<number> {
  let seen = 0;
  let removals = 0;
  while (!done.aborted) {
    const ready = timeline.current().filter((p) => imageOf(p) === image && isReady(p) && !p.metadata.deletionTimestamp).length;
    if (ready > seen) {
      seen = ready;
      await removeFromNode(env, pad, done).catch(() => undefined);
      removals++;
    }
    await sleep(100, done).catch(() => undefined);
  }
  return removals;
}
