import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveImageService, type ImageServiceHandle } from '../../harness/sandbox/node/cri-server.ts';
import { ImageStore, SimRegistry } from '../../harness/sandbox/node/image-store.ts';
import { CriClient, CriError, isCriError, unixEndpoint } from './client.ts';

/** Real gRPC over a real unix socket, served by a simulated node's image service. */
describe('CriClient', () => {
  let dir: string;
  let socketPath: string;
  let registry: SimRegistry;
  let store: ImageStore;
  let server: ImageServiceHandle | undefined;
  let client: CriClient;
  let pullMs: number;
  const signal = new AbortController().signal;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ebb-cric-'));
    socketPath = path.join(dir, 'cri.sock');
    registry = new SimRegistry();
    pullMs = 5_000;
    store = new ImageStore({ registry, pullMs: () => pullMs });
    server = await serveImageService({ socketPath, store });
    client = CriClient.connect(unixEndpoint(socketPath));
  });

  afterEach(async () => {
    client.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('rejects with Aborted, without calling the runtime, when the signal has already fired', async () => {
    const ac = new AbortController();
    ac.abort();

    const err: unknown = await client.pullImage('nginx:1.27', { signal: ac.signal }).catch((e: unknown) => e);

    expect(isCriError(err, 'Aborted')).toBe(true);
    expect(store.status('nginx:1.27')).toBeUndefined();
  });

  it('rejects promptly with Aborted when the signal fires during the call', async () => {
    const ac = new AbortController();
    const pending = client.pullImage('nginx:1.27', { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const started = Date.now();

    await expect(pending).rejects.toSatisfy((e) => isCriError(e, 'Aborted'));
    // When aborted, not when the pull would have finished (pullMs).
    expect(Date.now() - started).toBeLessThan(pullMs / 2);
  });

  it('fails with DeadlineExceeded when the pull outlives its timeout', async () => {
    const err: unknown = await client.pullImage('nginx:1.27', { signal, timeoutMs: 100 }).catch((e: unknown) => e);

    expect(isCriError(err, 'DeadlineExceeded')).toBe(true);
    expect((err as CriError).retryClass).toBe('transient');
    expect((err as CriError).method).toBe('PullImage');
  });

  it('fails fast with Unavailable when no runtime listens on the socket', async () => {
    await server?.close();
    server = undefined;

    const err: unknown = await client.listImages({ signal, timeoutMs: 10_000 }).catch((e: unknown) => e);

    expect(isCriError(err, 'Unavailable')).toBe(true);
  });

  it('fails with Unavailable after close', async () => {
    client.close();

    await expect(client.imageStatus('nginx:1.27', { signal })).rejects.toSatisfy((e) => isCriError(e, 'Unavailable'));
  });

  it('waits for the runtime with ready(), bounded by its timeout and signal', async () => {
    await expect(client.ready({ signal, timeoutMs: 2_000 })).resolves.toBeUndefined();

    await server?.close();
    server = undefined;
    await expect(client.ready({ signal, timeoutMs: 100 })).rejects.toSatisfy((e) => isCriError(e, 'DeadlineExceeded'));
    const ac = new AbortController();
    const waiting = client.ready({ signal: ac.signal, timeoutMs: 10_000 });
    ac.abort();
    await expect(waiting).rejects.toSatisfy((e) => isCriError(e, 'Aborted'));
  });

  it('sends registry credentials to the runtime but never keeps them in errors', async () => {
    pullMs = 0;
    const auth = { username: 'robot', password: 's3cret-pw', registryToken: 's3cret-token' };
    await expect(client.pullImage('nginx:1.27', { signal, auth })).resolves.toMatch(/^sha256:/);

    registry.failPulls('redis:7');
    const err: unknown = await client.pullImage('redis:7', { signal, auth }).catch((e: unknown) => e);

    expect(isCriError(err, 'Unknown')).toBe(true);
    const dump = JSON.stringify({ ...(err as object), message: (err as Error).message, stack: (err as Error).stack });
    expect(dump).not.toContain('s3cret');
    expect(Object.keys(err as object).sort()).toEqual(['code', 'grpcCode', 'method', 'name']);
  });

  it('accepts only unix:///absolute/path endpoints', () => {
    expect(() => CriClient.connect(socketPath)).toThrow(/no unix:\/\/ scheme/);
    expect(() => CriClient.connect('tcp://127.0.0.1:10010')).toThrow(CriError);
    const long = path.join(dir, 'y'.repeat(120), 'cri.sock');
    expect(() => CriClient.connect(unixEndpoint(long))).toThrow(/limit is 103/);
  });
});
