/**
 * The node daemon against the sandbox: a real apiserver and one simulated node's CRI image service. The
 * daemon runs in this process, with its runtime wrapped in a recorder so the test sees every call it makes.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList, ImageListEntry, ImageStatus } from '../../../src/api/image-list.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { createLogger } from '../../../src/common/log.ts';
import { CriClient, unixEndpoint } from '../../../src/cri/client.ts';
import { criImageRuntime, type CriRuntime } from '../../../src/daemon/cri-adapter.ts';
import { startDaemon, type RunningDaemon } from '../../../src/daemon/daemon.ts';
import { daemonOptions } from '../../../src/daemon/options.ts';
import type { ImageRuntime, PullAuth } from '../../../src/daemon/runtime.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { KubeRest, loadKubeConfig, PatchType } from '../../../src/kube/rest.ts';
import { copyPullSecrets, createPullSecret, freshNamespace, sandbox } from '../support.ts';

interface Call {
  method: 'imageStatus' | 'pull';
  image: string;
  auth?: PullAuth | undefined;
}

/** Wraps a runtime and records every lookup and pull (credentials included: they stay in this process). */
function recording(rt: ImageRuntime): { runtime: ImageRuntime; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    runtime: {
      version: (signal) => rt.version(signal),
      imageStatus: (image, signal) => {
        calls.push({ method: 'imageStatus', image });
        return rt.imageStatus(image, signal);
      },
      pull: (image, auth, signal) => {
        calls.push({ method: 'pull', image, auth });
        return rt.pull(image, auth, signal);
      },
    },
  };
}

const run = randomBytes(3).toString('hex');
const image = (name: string): string => `registry.example.com/daemon-it/${name}:${run}`;
const WAIT = { timeoutMs: 30_000, intervalMs: 100 };

describe('ebb daemon on a simulated node', () => {
  const { rest, dir, nodeNames, kubeconfig } = sandbox();
  const node = nodeNames[nodeNames.length - 1]!;
  const socket = join(dir, 'nodes', node, 'cri.sock');
  let cri: CriRuntime;
  let recorder: ReturnType<typeof recording>;
  let daemon: RunningDaemon;
  /** Where the worker would copy pull secrets: the only namespace the daemon reads Secrets in. */
  let copies = '';
  let direct: CriClient;

  const list = (): Promise<ImageList | undefined> =>
    rest.get<ImageList>(imageListRef(node)).catch((err: unknown) => {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    });
  const statusOf = async (img: string): Promise<ImageStatus | undefined> => (await list())?.status?.images?.find((s) => s.image === img);
  const waitStatus = (img: string, ok: (s: ImageStatus) => boolean, what: string): Promise<ImageStatus> =>
    waitFor(
      async () => {
        const s = await statusOf(img);
        return s && ok(s) ? s : undefined;
      },
      { ...WAIT, what },
    );
  const pullsOf = (img: string): number => recorder.calls.filter((c) => c.method === 'pull' && c.image === img).length;
  const setImages = (images: ImageListEntry[]): Promise<ImageList> => rest.patch<ImageList>(imageListRef(node), { spec: { images } }, PatchType.merge);
  const removeList = async (): Promise<void> => {
    await rest.delete(imageListRef(node)).catch((err: unknown) => {
      if (!isKubeError(err, 'NotFound')) throw err;
    });
    await waitFor(async () => ((await list()) === undefined ? true : undefined), { ...WAIT, what: 'ImageList gone' });
  };

  beforeAll(async () => {
    await stat(socket);
    await removeList();
    copies = await freshNamespace('copies');
    cri = criImageRuntime(unixEndpoint(socket), { pullTimeoutMs: 60_000 });
    recorder = recording(cri);
    direct = CriClient.connect(unixEndpoint(socket));
    const opts = daemonOptions({
      nodeName: node,
      criEndpoint: unixEndpoint(socket),
      httpAddress: '127.0.0.1',
      httpPort: 0,
      statusFlushMs: 500,
      backoffBaseMs: 300,
      backoffMaxMs: 1_000,
      recheckPeriodMs: 1_000,
      pullSecretNamespace: copies,
    });
    daemon = await startDaemon(opts, { rest: new KubeRest(loadKubeConfig(kubeconfig)), runtime: recorder.runtime, log: createLogger('daemon', 'warn') });
  });

  afterAll(async () => {
    await daemon?.stop();
    cri?.close();
    direct?.close();
    await removeList();
  });

  it('is ready once its watch is up and the runtime answers, with no ImageList yet', async () => {
    const readyz = async (): Promise<number> => (await fetch(`http://127.0.0.1:${daemon.httpPort}/readyz`)).status;
    await waitFor(async () => ((await readyz()) === 200 ? true : undefined), { ...WAIT, what: '/readyz 200' });
    expect(daemon.notReady()).toBeUndefined();
  });

  it('pulls the images of a new ImageList and reports Pulled with imageRef and lastPullTime', async () => {
    const created = await rest.create<ImageList>(imageListRef(), {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: node },
      spec: { images: [{ image: image('a') }, { image: image('b') }] },
    });
    for (const img of [image('a'), image('b')]) {
      const s = await waitStatus(img, (s) => s.phase === 'Pulled', `${img} Pulled`);
      expect(s).toMatchObject({
        imageRef: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
        attempts: 1,
        lastPullTime: expect.any(String) as unknown,
      });
      // When it started and how long it took: what the worker plans pre-warming with.
      expect(Date.parse(s.pullStartTime ?? '')).toBeLessThanOrEqual(Date.parse(s.lastPullTime ?? ''));
      expect(s.lastPullDurationMillis).toBeGreaterThanOrEqual(0);
      expect(pullsOf(img)).toBe(1);
    }
    expect((await list())?.status?.observedGeneration).toBe(created.metadata.generation);
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/ebb_daemon_pulls_total\{result="success"\} [1-9]/);
    expect(metrics).toMatch(/ebb_daemon_status_writes_total\{result="ok"\} [1-9]/);
  });

  it('pulls again when pullRequestedAt is set, even though the image is present', async () => {
    const before = await waitStatus(image('a'), (s) => s.phase === 'Pulled', 'a Pulled');
    const requested = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await setImages([{ image: image('a'), pullRequestedAt: requested }, { image: image('b') }]);
    const after = await waitStatus(image('a'), (s) => s.observedPullRequestedAt === requested, 'request answered');
    expect(pullsOf(image('a'))).toBe(2);
    expect(after).toMatchObject({ phase: 'Pulled', attempts: 1 });
    expect(Date.parse(after.lastPullTime!)).toBeGreaterThanOrEqual(Date.parse(before.lastPullTime!));
  });

  it('reports an invalid reference as Failed and never sends it to the runtime', async () => {
    const bad = `registry.example.com/${'x'.repeat(300)}:v1`;
    await setImages([{ image: image('a') }, { image: image('b') }, { image: bad }]);
    const s = await waitStatus(bad, (s) => s.phase === 'Failed', 'invalid entry Failed');
    expect(s.message).toContain(JSON.stringify(bad));
    expect(recorder.calls.some((c) => c.image === bad)).toBe(false);
  });

  it('retries a failing registry with backoff and says why in the status', async () => {
    const unreachable = `registry.daemon-it.invalid/app:${run}`;
    await setImages([{ image: image('a') }, { image: unreachable }]);
    const s = await waitStatus(unreachable, (s) => s.phase === 'Failed' && (s.attempts ?? 0) >= 2, 'retried');
    expect(s.message).toMatch(/no such host/);
    // Entries removed from the spec leave the status.
    await waitFor(async () => ((await list())?.status?.images?.map((i) => i.image).join() === [image('a'), unreachable].join() ? true : undefined), {
      ...WAIT,
      what: 'status follows the spec',
    });
  });

  it('uses the credentials of the pull secret for its registry; a missing secret fails the image', async () => {
    const ns = await freshNamespace('daemon');
    await createPullSecret(ns, 'regcred', { 'https://registry.example.com': { username: 'robot', password: 'pw-not-logged' } });
    await setImages([
      { image: image('private'), pullSecret: { namespace: ns, name: 'regcred' } },
      { image: image('nosecret'), pullSecret: { namespace: ns, name: 'missing' } },
    ]);
    // The worker's copies, the only Secrets the daemon reads.
    await copyPullSecrets(node, copies);
    await waitStatus(image('private'), (s) => s.phase === 'Pulled', 'private Pulled');
    expect(recorder.calls.find((c) => c.method === 'pull' && c.image === image('private'))?.auth).toMatchObject({
      username: 'robot',
      serverAddress: 'registry.example.com',
    });
    const failed = await waitStatus(image('nosecret'), (s) => s.phase === 'Failed', 'missing secret Failed');
    expect(failed.message).toBe(`pull secret ${ns}/missing is unusable`);
    expect(pullsOf(image('nosecret'))).toBe(0);
    expect(JSON.stringify(await list())).not.toContain('pw-not-logged');
  });

  it('pulls again an image that went away from the runtime (image garbage collection)', async () => {
    await setImages([{ image: image('gc') }]);
    await waitStatus(image('gc'), (s) => s.phase === 'Pulled', 'gc Pulled');
    await direct.removeImage(image('gc'), { signal: AbortSignal.timeout(5_000) });
    await waitFor(() => (pullsOf(image('gc')) === 2 ? true : undefined), { ...WAIT, what: 'pulled again after removal' });
    await waitStatus(image('gc'), (s) => s.phase === 'Pulled', 'gc Pulled again');
  });

  it('batches status writes: many image changes in one window go out in one write', async () => {
    const many = Array.from({ length: 8 }, (_, i) => image(`batch-${i}`));
    for (const img of many) await direct.pullImage(img, { signal: AbortSignal.timeout(10_000) });
    await setImages([{ image: image('gc') }]);
    await waitFor(async () => ((await list())?.status?.images?.length === 1 ? true : undefined), { ...WAIT, what: 'status settled' });
    const writesBefore = daemon.statusWrites();
    await setImages(many.map((img) => ({ image: img })));
    await waitFor(async () => ((await list())?.status?.images?.filter((s) => s.phase === 'Pulled').length === many.length ? true : undefined), {
      ...WAIT,
      what: 'all Pulled',
    });
    // Eight images went from Pending to Pulled (sixteen changes) and the generation moved on.
    expect(daemon.statusWrites() - writesBefore).toBeLessThanOrEqual(2);
    expect(many.every((img) => pullsOf(img) === 0)).toBe(true);
  });

  it('drops everything when the ImageList is deleted, and serves a re-created one', async () => {
    const pullsOfA = pullsOf(image('a'));
    await removeList();
    const recreated = await rest.create<ImageList>(imageListRef(), {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: node },
      spec: { images: [{ image: image('c') }, { image: image('a') }] },
    });
    await waitStatus(image('c'), (s) => s.phase === 'Pulled', 'c Pulled on the new list');
    const st = await waitStatus(image('a'), (s) => s.phase === 'Pulled', 'a Pulled on the new list');
    // `a` was still in the runtime: reported from a lookup, with no new pull, and no status from the old list.
    expect(st.observedPullRequestedAt).toBeUndefined();
    expect(pullsOf(image('a'))).toBe(pullsOfA);
    expect((await list())?.metadata.uid).toBe(recreated.metadata.uid);
    expect((await list())?.status?.observedGeneration).toBe(1);
  });
});
