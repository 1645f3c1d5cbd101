import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/common/wait.ts';
import { CriClient, isCriError, type CriError } from '../../src/cri/client.ts';
import { startContainerd, type Containerd } from './containerd.ts';
import { buildImage, pushImage, type OciImage } from '../../harness/sandbox/real-node/oci-image.ts';
import { startRegistry, type AccessLogEntry, type Registry } from './registry.ts';

const REPO = 'ebb/app';

/** ebb's CRI client against Debian's containerd, pulling from Debian's docker-registry on 127.0.0.1. */
describe('CRI client against containerd', () => {
  const signal = AbortSignal.timeout(600_000);
  let containerd: Containerd;
  let registry: Registry;
  let client: CriClient;
  const images: Record<'v1' | 'v2', { image: OciImage; digest: string; ref: string }> = {} as never;

  beforeAll(async () => {
    [containerd, registry] = await Promise.all([startContainerd(signal), startRegistry({ signal })]);
    client = CriClient.connect(containerd.endpoint, { callTimeoutMs: 10_000, pullTimeoutMs: 60_000 });
    for (const tag of ['v1', 'v2'] as const) {
      const image = buildImage({ 'version.txt': `${tag}\n` });
      const digest = await pushImage(registry.url, { repo: REPO, tag }, image, { signal });
      images[tag] = { image, digest, ref: `${registry.host}/${REPO}:${tag}` };
    }
  });

  afterAll(async () => {
    client?.close();
    await Promise.all([containerd?.dispose(), registry?.dispose()]);
  });

  it('answers Version', async () => {
    const version = await client.version({ signal });

    expect(version).toMatchObject({ runtimeName: 'containerd', runtimeApiVersion: 'v1' });
    expect(version.runtimeVersion).toMatch(/^\d+\.\d+/);
  });

  it('pulls v1 and v2 from the registry, then shows each through ImageStatus', async () => {
    for (const { image, digest, ref } of Object.values(images)) {
      expect(await client.imageStatus(ref, { signal })).toBeUndefined();

      const imageRef = await client.pullImage(ref, { signal });

      expect(imageRef).toBe(image.id);
      const status = await client.imageStatus(ref, { signal });
      expect(status).toMatchObject({ id: image.id, repoTags: [ref], repoDigests: [`${registry.host}/${REPO}@${digest}`], pinned: false });
      expect(status?.size).toBeGreaterThan(0);
      expect(await client.imageStatus(image.id, { signal })).toMatchObject({ id: image.id });
    }
    expect(images.v1.image.id).not.toBe(images.v2.image.id);
  });

  it('lists the pulled images, all of them or the one a reference names', async () => {
    const all = await client.listImages({ signal });
    expect(all.map((i) => i.id).sort()).toEqual([images.v1.image.id, images.v2.image.id].sort());

    expect(await client.listImages({ signal, image: images.v2.ref })).toMatchObject([{ id: images.v2.image.id }]);
  });

  it('answers ImageFsInfo with the snapshotter filesystem', async () => {
    const [fs, ...rest] = await client.imageFsInfo({ signal });

    expect(rest).toEqual([]);
    expect(fs?.mountpoint).toBe(`${containerd.dir}/root/io.containerd.snapshotter.v1.native`);
    expect(Math.abs((fs?.timestampMs ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(fs?.usedBytes).toBeTypeOf('number');
  });

  it('asks the registry for the manifest on every pull, also of an image it has', async () => {
    const before = await manifestLog();
    expect(before).toEqual(
      expect.arrayContaining([
        { method: 'HEAD', path: `/v2/${REPO}/manifests/v1`, status: 200 },
        { method: 'GET', path: `/v2/${REPO}/manifests/${images.v1.digest}`, status: 200 },
      ]),
    );

    await expect(client.pullImage(images.v1.ref, { signal })).resolves.toBe(images.v1.image.id);

    // containerd resolves the tag again (HEAD); the manifest itself it has, so it does not GET it again.
    const after = await waitFor(async () => ((await manifestLog()).length > before.length ? manifestLog() : undefined), {
      timeoutMs: 5_000,
      what: 'the registry access log',
      signal,
    });
    expect(after.slice(before.length)).toEqual([{ method: 'HEAD', path: `/v2/${REPO}/manifests/v1`, status: 200 }]);
  });

  it('fails a pull of a missing tag or repository with ImageNotFound', async () => {
    for (const ref of [`${registry.host}/${REPO}:nope`, `${registry.host}/ebb/absent:v1`]) {
      const err = (await client.pullImage(ref, { signal }).catch((e: unknown) => e)) as CriError;

      expect(isCriError(err, 'ImageNotFound')).toBe(true);
      expect(err).toMatchObject({ grpcCode: 5, method: 'PullImage', retryClass: 'permanent' });
      expect(err.message).toBe(`CRI PullImage: failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`);
    }
  });

  it('fails a pull from an unreachable registry with a retryable Unknown', async () => {
    const err = (await client.pullImage('127.0.0.1:1/ebb/app:v1', { signal }).catch((e: unknown) => e)) as CriError;

    expect(err).toMatchObject({ code: 'Unknown', grpcCode: 2, retryClass: 'transient' });
    expect(err.message).toContain('connection refused');
  });

  it('fails with Unavailable while containerd is stopped, and works again once it is back on the same socket', async () => {
    await containerd.stop();

    const err = (await client.version({ signal }).catch((e: unknown) => e)) as CriError;
    expect(err).toMatchObject({ code: 'Unavailable', retryClass: 'transient' });
    await expect(client.imageStatus(images.v1.ref, { signal })).rejects.toSatisfy((e) => isCriError(e, 'Unavailable'));

    await containerd.start(signal);
    await client.ready({ signal, timeoutMs: 15_000 });
    await expect(client.version({ signal })).resolves.toMatchObject({ runtimeName: 'containerd' });
    // Same root: the images pulled before the restart are still there.
    expect(await client.imageStatus(images.v1.ref, { signal })).toMatchObject({ id: images.v1.image.id });
  });

  async function manifestLog(): Promise<AccessLogEntry[]> {
    return registry.manifestRequests(REPO);
  }
});
