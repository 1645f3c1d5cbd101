import { describe, expect, it } from 'vitest';
import { CriError, isCriError } from '../../src/cri/errors.ts';
import { FakeImageService } from './image-service.ts';

const signal = new AbortController().signal;

describe('FakeImageService', () => {
  it('pulls registry images, then reports them through ImageStatus, ListImages and ImageFsInfo', async () => {
    const fake = new FakeImageService();
    fake.addRegistryImage('example.com/app:v1', { size: 100 });

    const id = await fake.pullImage('example.com/app:v1', { signal });

    expect(await fake.imageStatus('example.com/app:v1', { signal })).toMatchObject({ id, repoTags: ['example.com/app:v1'], size: 100 });
    expect(await fake.imageStatus(id, { signal })).toMatchObject({ id });
    expect(await fake.listImages({ signal })).toHaveLength(1);
    expect(await fake.listImages({ signal, image: 'example.com/app:v2' })).toEqual([]);
    expect(await fake.imageFsInfo({ signal })).toMatchObject([{ usedBytes: 100, inodesUsed: 1 }]);
    expect(fake.calls).toEqual({ version: 0, imageStatus: 2, pullImage: 1, listImages: 2, imageFsInfo: 1 });
  });

  it('fails the nth call of a method as planned, and only that one', async () => {
    const fake = new FakeImageService();
    fake.addRegistryImage('app:v1');
    fake.failCall('pullImage', 2, 'Unavailable');
    const custom = new CriError('Unknown', 'ImageStatus', 'CRI ImageStatus: boom');
    fake.failCall('imageStatus', 1, custom);

    await expect(fake.pullImage('app:v1', { signal })).resolves.toMatch(/^sha256:/);
    const second: unknown = await fake.pullImage('app:v1', { signal }).catch((e: unknown) => e);
    expect(isCriError(second, 'Unavailable') && second.retryClass).toBe('transient');
    await expect(fake.pullImage('app:v1', { signal })).resolves.toMatch(/^sha256:/);
    await expect(fake.imageStatus('app:v1', { signal })).rejects.toBe(custom);
    expect(fake.calls.pullImage).toBe(3);
  });

  it('answers ImageNotFound for a missing image and AuthFailed without the right credential', async () => {
    const fake = new FakeImageService();
    fake.addRegistryImage('private/app:v1', { auth: { username: 'robot', password: 'pw' } });

    await expect(fake.pullImage('app:nope', { signal })).rejects.toSatisfy((e) => isCriError(e, 'ImageNotFound'));
    await expect(fake.pullImage('private/app:v1', { signal })).rejects.toSatisfy((e) => isCriError(e, 'AuthFailed'));
    const auth = { username: 'robot', password: 'pw' };
    await expect(fake.pullImage('private/app:v1', { signal, auth })).resolves.toMatch(/^sha256:/);
    expect(fake.pulls.map((p) => p.auth)).toEqual([undefined, undefined, auth]);
  });

  it('honours the signal and the deadline of a slow pull', async () => {
    const fake = new FakeImageService();
    fake.addRegistryImage('app:v1');
    fake.pullDelayMs = 5_000;

    await expect(fake.pullImage('app:v1', { signal, timeoutMs: 20 })).rejects.toSatisfy((e) => isCriError(e, 'DeadlineExceeded'));
    const ac = new AbortController();
    const pending = fake.pullImage('app:v1', { signal: ac.signal });
    ac.abort();
    await expect(pending).rejects.toSatisfy((e) => isCriError(e, 'Aborted'));
    expect(await fake.imageStatus('app:v1', { signal })).toBeUndefined();
  });
});
