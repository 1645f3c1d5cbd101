import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CriClient, isCriError, unixEndpoint } from '../../../src/cri/client.ts';
import { serveImageService, type ImageServiceHandle } from './cri-server.ts';
import { ImageStore, SimRegistry } from './image-store.ts';

const NGINX = 'nginx:1.27';

describe('CRI ImageService of a simulated node', () => {
  let dir: string;
  let socketPath: string;
  let registry: SimRegistry;
  let store: ImageStore;
  let server: ImageServiceHandle;
  let client: CriClient;
  /** Registry transfers: the store asks for a pull delay only when the content is not present. */
  let transfers: number;
  let pullMs: number;
  const signal = new AbortController().signal;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ebb-cri-'));
    socketPath = path.join(dir, 'cri.sock');
    registry = new SimRegistry();
    transfers = 0;
    pullMs = 300;
    store = new ImageStore({
      registry,
      pullMs: () => {
        transfers++;
        return pullMs;
      },
    });
    server = await serveImageService({ socketPath, store });
    client = CriClient.connect(unixEndpoint(socketPath));
  });

  afterEach(async () => {
    client.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('pulls an image and reports it through ImageStatus by reference and by ID', async () => {
    const ref = await client.pullImage(NGINX, { signal });

    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    const byRef = await client.imageStatus(NGINX, { signal });
    expect(byRef).toMatchObject({ id: ref, repoTags: ['docker.io/library/nginx:1.27'], pinned: false });
    expect(byRef?.repoDigests[0]).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(byRef?.size).toBe(store.status(NGINX)?.size);
    expect(typeof byRef?.size).toBe('number');
    expect(await client.imageStatus(ref, { signal })).toEqual(byRef);
  });

  it('answers Version and reports the image filesystem usage of what it holds', async () => {
    expect(await client.version({ signal })).toMatchObject({ runtimeName: 'ebb-sandbox', runtimeApiVersion: 'v1' });
    expect((await client.imageFsInfo({ signal }))[0]?.usedBytes).toBe(0);
    await client.pullImage(NGINX, { signal });
    expect((await client.imageFsInfo({ signal }))[0]?.usedBytes).toBe(store.status(NGINX)?.size);
  });

  it('serves a second pull of a present image from the store without a registry transfer', async () => {
    const first = await client.pullImage(NGINX, { signal });
    const second = await client.pullImage(NGINX, { signal });

    expect(second).toBe(first);
    expect(transfers).toBe(1);
    expect(store.pullCount).toBe(1);
    expect(store.pullRequests).toBe(2);
  });

  it('shares one transfer between concurrent pulls of the same image', async () => {
    const [a, b] = await Promise.all([client.pullImage(NGINX, { signal }), client.pullImage(NGINX, { signal })]);

    expect(a).toBe(b);
    expect(transfers).toBe(1);
  });

  it('answers ImageStatus of an absent image with no image rather than an error', async () => {
    await expect(client.imageStatus('busybox:1.36', { signal })).resolves.toBeUndefined();
    await expect(client.imageStatus('sha256:0123', { signal })).resolves.toBeUndefined();
  });

  it('lists images, optionally filtered by reference', async () => {
    pullMs = 0;
    const nginx = await client.pullImage(NGINX, { signal });
    const busybox = await client.pullImage('busybox:1.36', { signal });

    const all = await client.listImages({ signal });
    expect(all.map((i) => i.id).sort()).toEqual([nginx, busybox].sort());
    expect(await client.listImages({ signal, image: 'busybox:1.36' })).toMatchObject([{ id: busybox }]);
    expect(await client.listImages({ signal, image: 'redis:7' })).toEqual([]);
  });

  it('removes images idempotently', async () => {
    pullMs = 0;
    await client.pullImage(NGINX, { signal });

    await client.removeImage(NGINX, { signal });
    await client.removeImage(NGINX, { signal });
    await client.removeImage('never-pulled:1', { signal });

    expect(await client.imageStatus(NGINX, { signal })).toBeUndefined();
    expect(store.list()).toEqual([]);
  });

  it('rejects an invalid reference with InvalidArgument', async () => {
    const err: unknown = await client.pullImage('Not A Valid:Ref', { signal }).catch((e: unknown) => e);

    expect(isCriError(err, 'InvalidArgument')).toBe(true);
    expect(isCriError(err) && err.retryClass).toBe('permanent');
    expect(transfers).toBe(0);
  });

  it('reports a registry failure like containerd, and pulls once the registry recovers', async () => {
    registry.failPulls(NGINX, 'docker.io/library/nginx:1.27: not found');

    const err: unknown = await client.pullImage(NGINX, { signal }).catch((e: unknown) => e);
    expect(isCriError(err, 'Unknown')).toBe(true);
    expect(isCriError(err) && err.retryClass).toBe('transient');
    expect((err as Error).message).toContain('failed to pull and unpack image "docker.io/library/nginx:1.27"');

    registry.clearFailure(NGINX);
    await expect(client.pullImage(NGINX, { signal })).resolves.toMatch(/^sha256:/);
  });

  it('rejects promptly with Aborted when the caller aborts a slow pull', async () => {
    pullMs = 10_000;
    const ac = new AbortController();
    const pending = client.pullImage(NGINX, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);

    const err: unknown = await pending.catch((e: unknown) => e);

    expect(isCriError(err, 'Aborted')).toBe(true);
    // Settled while the transfer was still running: nothing was stored yet.
    expect(transfers).toBe(1);
    expect(store.pullCount).toBe(0);
    expect(store.status(NGINX)).toBeUndefined();
  });

  it('releases the socket on close, so calls fail as Unavailable and the path can be bound again', async () => {
    await server.close();

    expect(existsSync(socketPath)).toBe(false);
    const err: unknown = await client.imageStatus(NGINX, { signal }).catch((e: unknown) => e);
    expect(isCriError(err, 'Unavailable')).toBe(true);

    server = await serveImageService({ socketPath, store });
    const fresh = CriClient.connect(unixEndpoint(socketPath));
    try {
      await expect(fresh.listImages({ signal })).resolves.toEqual([]);
    } finally {
      fresh.close();
    }
    // The old client reconnects by itself, as the daemon's does after a runtime restart.
    await client.ready({ signal, timeoutMs: 5_000 });
    await expect(client.listImages({ signal })).resolves.toEqual([]);
  });

  it('replaces a stale socket file left by a previous run', async () => {
    await server.close();
    const script = `require('node:net').createServer().listen(${JSON.stringify(socketPath)}, () => process.exit(0))`;
    execFileSync(process.execPath, ['-e', script]);
    expect(lstatSync(socketPath).isSocket()).toBe(true);

    server = await serveImageService({ socketPath, store });

    await expect(client.listImages({ signal })).resolves.toEqual([]);
  });

  it('refuses a socket path that is in use, is not a socket, or is too long', async () => {
    await expect(serveImageService({ socketPath, store })).rejects.toThrow(/in use/);

    const file = path.join(dir, 'file');
    await writeFile(file, 'x');
    await expect(serveImageService({ socketPath: file, store })).rejects.toThrow(/not a unix socket/);

    const long = path.join(dir, 'x'.repeat(120), 'cri.sock');
    await expect(serveImageService({ socketPath: long, store })).rejects.toThrow(/bytes; the limit is/);
  });
});
