import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { ImageList, ImageStatus } from '../../../src/api/image-list.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import type { StatusSnapshot } from '../../../src/daemon/scheduler.ts';
import { StatusWriter, statusPatch, type StatusApi, type StatusPatch } from '../../../src/daemon/status.ts';
import { KubeError } from '../../../src/kube/errors.ts';

const log = pino({ level: 'silent' });

/** An apiserver holding one ImageList: merge-patches status with uid and resourceVersion preconditions. */
class FakeApi implements StatusApi {
  obj: ImageList = { apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'ImageList', metadata: { name: 'n1', uid: 'u1', resourceVersion: '1', generation: 1 } };
  patches: StatusPatch[] = [];
  gets = 0;
  failNext: KubeError | undefined;

  patchStatus(patch: StatusPatch): Promise<ImageList> {
    this.patches.push(structuredClone(patch));
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      return Promise.reject(err);
    }
    if (patch.metadata.uid !== this.obj.metadata.uid || patch.metadata.resourceVersion !== this.obj.metadata.resourceVersion) {
      return Promise.reject(new KubeError('Conflict', 409, 'the object has been modified'));
    }
    this.bump({ status: patch.status });
    return Promise.resolve(structuredClone(this.obj));
  }

  get(): Promise<ImageList> {
    this.gets++;
    return Promise.resolve(structuredClone(this.obj));
  }

  /** Someone else changes the object. */
  bump(change: Partial<ImageList> = {}): void {
    this.obj = { ...this.obj, ...change, metadata: { ...this.obj.metadata, resourceVersion: String(Number(this.obj.metadata.resourceVersion) + 1) } };
  }
}

const pulled = (image: string): ImageStatus => ({ image, phase: 'Pulled', imageRef: `sha256:${image}` });

const writers: StatusWriter[] = [];
afterEach(async () => {
  await Promise.all(writers.splice(0).map((w) => w.close(AbortSignal.timeout(1000))));
});

function setup(flushMs = 30): { api: FakeApi; w: StatusWriter; desired: { value: StatusSnapshot | undefined } } {
  const api = new FakeApi();
  const desired: { value: StatusSnapshot | undefined } = { value: { uid: 'u1', generation: 1, images: [] } };
  const w = new StatusWriter({ api, desired: () => desired.value, flushMs, log, errorBackoff: { baseMs: 10, capMs: 20 } });
  w.observe(api.obj);
  writers.push(w);
  return { api, w, desired };
}

describe('statusPatch', () => {
  const observed = { uid: 'u1', resourceVersion: '7', status: { observedGeneration: 3, images: [{ phase: 'Pulled' as const, image: 'a', imageRef: 'r' }] } };

  it('is undefined when the list already reads so, whatever the key order', () => {
    expect(statusPatch(observed, { uid: 'u1', generation: 3, images: [{ image: 'a', imageRef: 'r', phase: 'Pulled' }] })).toBeUndefined();
  });

  it('carries uid and resourceVersion as preconditions, the generation, and every image', () => {
    expect(statusPatch(observed, { uid: 'u1', generation: 4, images: [{ image: 'a', imageRef: 'r', phase: 'Pulled' }] })).toEqual({
      apiVersion: 'apps.ebb.dev/v1alpha1',
      kind: 'ImageList',
      metadata: { uid: 'u1', resourceVersion: '7' },
      status: { observedGeneration: 4, images: [{ image: 'a', imageRef: 'r', phase: 'Pulled' }] },
    });
  });

  it('leaves out images no longer in the spec (the list replaces the old one)', () => {
    expect(statusPatch(observed, { uid: 'u1', generation: 3, images: [] })?.status).toEqual({ observedGeneration: 3, images: [] });
  });

  it('never writes to another list than the one the status belongs to', () => {
    expect(statusPatch(observed, { uid: 'u2', generation: 3, images: [] })).toBeUndefined();
    expect(statusPatch(undefined, { uid: 'u1', generation: 3, images: [] })).toBeUndefined();
  });
});

describe('StatusWriter', () => {
  it('sends the changes of one flush window in one write', async () => {
    const { api, w, desired } = setup(40);
    for (let i = 0; i < 20; i++) {
      desired.value = { uid: 'u1', generation: 1, images: Array.from({ length: i + 1 }, (_, k) => pulled(`img-${k}`)) };
      w.markDirty();
    }
    await waitFor(() => (api.patches.length > 0 ? true : undefined), { timeoutMs: 2000, what: 'a write' });
    await sleep(100);
    expect(api.patches).toHaveLength(1);
    expect(w.writes).toBe(1);
    expect(api.patches[0]!.status.images).toHaveLength(20);
  });

  it('writes nothing when the status already reads so', async () => {
    const { api, w } = setup();
    api.obj.status = { observedGeneration: 1, images: [] };
    w.observe(api.obj);
    w.markDirty();
    await sleep(80);
    expect(api.patches).toHaveLength(0);
  });

  it('re-reads the list after a conflict and writes again', async () => {
    const { api, w, desired } = setup();
    api.bump();
    desired.value = { uid: 'u1', generation: 1, images: [pulled('a')] };
    w.markDirty();
    await waitFor(() => (api.obj.status?.images?.length ? true : undefined), { timeoutMs: 2000, what: 'status written' });
    expect(api.patches.map((p) => p.metadata.resourceVersion)).toEqual(['1', '2']);
    expect(api.gets).toBe(1);
  });

  it('drops the write when the list was re-created (another uid)', async () => {
    const { api, w, desired } = setup();
    api.obj = { ...api.obj, metadata: { ...api.obj.metadata, uid: 'u2', resourceVersion: '9' } };
    desired.value = { uid: 'u1', generation: 1, images: [pulled('a')] };
    w.markDirty();
    await waitFor(() => (api.gets > 0 ? true : undefined), { timeoutMs: 2000, what: 're-read' });
    await sleep(60);
    expect(api.patches).toHaveLength(1);
    expect(api.obj.status).toBeUndefined();
  });

  it('retries a failed write after a backoff', async () => {
    const { api, w, desired } = setup();
    api.failNext = new KubeError('ServerError', 500, 'etcd timeout');
    desired.value = { uid: 'u1', generation: 1, images: [pulled('a')] };
    w.markDirty();
    await waitFor(() => (api.obj.status ? true : undefined), { timeoutMs: 2000, what: 'status written after the error' });
    expect(api.patches).toHaveLength(2);
  });

  it('close() writes what is pending at once', async () => {
    const { api, w, desired } = setup(60_000);
    desired.value = { uid: 'u1', generation: 2, images: [pulled('a')] };
    w.markDirty();
    await w.close(AbortSignal.timeout(1000));
    expect(api.obj.status).toEqual({ observedGeneration: 2, images: [pulled('a')] });
    w.markDirty();
    await sleep(20);
    expect(api.patches).toHaveLength(1);
  });
});
