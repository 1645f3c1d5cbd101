/**
 * Keeping the pull benchmark's padded image off the real nodes between sides, so each side's first pull on
 * each node downloads and unpacks it in full.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { imageListRef } from '../../src/api/group.ts';
import { waitFor } from '../../src/common/wait.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import type { OciImage } from '../../harness/sandbox/real-node/oci-image.ts';
import { removePods } from '../../harness/sandbox/real-node/cri-pods.ts';
import type { RealEnv } from './realnode-env.ts';

const exec = promisify(execFile);
/** The real node's containerd snapshotter (harness/sandbox/real-node/containerd.ts). */
const SNAPSHOTTER = 'native';
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);

/**
 * Makes the node cold for the padded image. First the pod sandboxes of finished sides (namespaces in
 * `finished`, already deleted in the apiserver) are removed through CRI, as the kubelet's garbage collection
 * would later: their containers' snapshots would keep the image's unpacked layer, and containerd does not
 * fetch a layer whose snapshot exists. Then every reference of the image ID is removed through CRI, and the
 * layer is checked gone from containerd's content store and snapshotter (reported on stderr if it is not).
 */
export async function makeAbsent(env: RealEnv, pad: OciImage, finished: ReadonlySet<string>, signal: AbortSignal): Promise<void> {
  await Promise.all(env.nodes.map((n) => makeAbsentOn(env, n, pad, finished, signal)));
}

async function makeAbsentOn(env: RealEnv, on: RealEnv['nodes'][number], pad: OciImage, finished: ReadonlySet<string>, signal: AbortSignal): Promise<void> {
  const { node, cri } = on;
  // No ImageList entry left from an earlier side may make the daemon pull it back.
  await env.rest.delete(imageListRef(node.name)).catch((err: unknown) => {
    if (!isKubeError(err, 'NotFound')) throw err;
  });
  await removePods(node.criSocket, (p) => finished.has(p.namespace));
  for (const img of await cri.listImages({ signal })) if (img.id === pad.id) await cri.removeImage(img.id, { signal });
  if ((await cri.listImages({ signal })).some((img) => img.id === pad.id)) throw new Error(`${pad.id} still on ${node.name} after RemoveImage`);
  const ctr = async (...args: string[]): Promise<string> => (await exec('ctr', ['-a', node.criSocket, '-n', 'k8s.io', ...args], { signal })).stdout;
  const chainId = (JSON.parse(pad.config.bytes.toString()) as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids[0] ?? '';
  const left = async (): Promise<string[]> => [
    ...((await ctr('content', 'ls', '-q')).includes(pad.layer.digest) ? ['layer content'] : []),
    ...((await ctr('snapshots', '--snapshotter', SNAPSHOTTER, 'ls')).includes(chainId) ? ['layer snapshot'] : []),
  ];
  const t0 = Date.now();
  const gone = await waitFor(async () => ((await left()).length === 0 ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 250,
    signal,
    what: 'layer gone',
  }).catch(() => false);
  if (!gone) progress(`still on ${node.name} 30 s after RemoveImage: ${(await left()).join(', ')}; containers: ${await ctr('containers', 'ls')}`);
  else if (Date.now() - t0 > 300) progress(`layer left ${node.name} ${Date.now() - t0} ms after RemoveImage`);
}
