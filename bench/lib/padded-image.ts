/**
 * The pull benchmark's big image: the sandbox's HTTP app (answering `v2`) plus a file of incompressible,
 * deterministic padding (AES-CTR keystream over zeros), as one gzip'd layer of about `mb` megabytes. Built
 * once per size and app binary, cached by content under the ebb cache dir like the sandbox's own images,
 * and pushed to the loopback registry (nothing comes from outside the machine).
 */
import { createCipheriv, createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_IMAGES, cacheDir, programBinary } from '../../harness/sandbox/real-node/images.ts';
import { OCI_MANIFEST, buildImage, pushImage, type OciImage } from '../../harness/sandbox/real-node/oci-image.ts';

const sha256 = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** `bytes` of keystream: the same bytes for the same length, and gzip cannot shrink them. */
function padding(bytes: number): Buffer {
  const cipher = createCipheriv('aes-128-ctr', Buffer.alloc(16, 0x65), Buffer.alloc(16, 0x62));
  return Buffer.concat([cipher.update(Buffer.alloc(bytes)), cipher.final()]);
}

/** The padded app image of about `mb` MB (10^6 bytes), from the cache or built and cached. */
export async function paddedImage(mb: number, signal: AbortSignal): Promise<OciImage> {
  const spec = SANDBOX_IMAGES.find((s) => s.repo === 'ebb/app' && s.tag === 'v2');
  if (!spec) throw new Error('no ebb/app:v2 image spec');
  const binary = await readFile(await programBinary(spec, signal));
  const key = createHash('sha256').update(binary).update(`pad-${mb}`).digest('hex').slice(0, 16);
  const dir = join(cacheDir(), 'images', `pad-${mb}mb-${key}`);
  const files = ['layer', 'config', 'manifest'].map((f) => join(dir, f));
  const [layer, config, manifest] = await Promise.all(files.map((f) => readFile(f).catch(() => undefined)));
  if (layer && config && manifest) {
    const c = { digest: sha256(config), bytes: config };
    return { layer: { digest: sha256(layer), bytes: layer }, config: c, manifest: { digest: sha256(manifest), bytes: manifest }, id: c.digest };
  }
  const image = buildImage(
    { app: { content: binary, mode: 0o755 }, 'pad.bin': { content: padding(mb * 1_000_000), mode: 0o644 } },
    { entrypoint: ['/app'], exposedPorts: [8080] },
  );
  await mkdir(dir, { recursive: true });
  for (const [i, bytes] of [image.layer.bytes, image.config.bytes, image.manifest.bytes].entries()) {
    const file = files[i] ?? '';
    await writeFile(`${file}.tmp`, bytes);
    await rename(`${file}.tmp`, file);
  }
  return image;
}

/** Pushes `image` to the registry at `registryHost` as `repo:<tag>` for every tag (blobs once, then each manifest). */
export async function pushTags(registryHost: string, repo: string, tags: readonly string[], image: OciImage, signal: AbortSignal): Promise<void> {
  const [first, ...rest] = tags;
  if (first === undefined) return;
  await pushImage(`http://${registryHost}`, { repo, tag: first }, image, { signal });
  for (const tag of rest) {
    const res = await fetch(`http://${registryHost}/v2/${repo}/manifests/${tag}`, {
      method: 'PUT',
      headers: { 'content-type': OCI_MANIFEST },
      body: image.manifest.bytes,
      signal,
    });
    await res.body?.cancel();
    if (res.status !== 201) throw new Error(`manifest ${repo}:${tag}: registry answered ${res.status}`);
  }
}
