/**
 * The daemon's disk guard against a real containerd (and a real docker-registry, child processes) and the sandbox
 * apiserver: with EBB_IMAGE_FS_HIGH_PERCENT below the real usage of the filesystem containerd's root is on, no
 * pull starts and the ImageList status says why. The witnesses: the status the daemon writes, the mountpoint CRI
 * ImageFsInfo answers, statfs of that mountpoint, and the image calls containerd's CRI plugin logged.
 */
import { statfs } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList, ImageStatus } from '../../../src/api/image-list.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { CriClient } from '../../../src/cri/client.ts';
import { usedPercent } from '../../../src/daemon/disk.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { buildImage, pushImage } from '../../../harness/sandbox/real-node/oci-image.ts';
import { startContainerd, type Containerd } from '../../runtime/containerd.ts';
import checkRuntimePackages from '../../runtime/global-setup.ts';
import { startRegistry, type Registry } from '../../runtime/registry.ts';
import { sandbox } from '../support.ts';
import { startEbbDaemon, type EbbDaemon } from './ebb-daemon.ts';

const REPO = 'ebb/disk';
const WAIT = { timeoutMs: 30_000, intervalMs: 100 };

describe('ebb daemon disk guard against containerd', () => {
  const { rest, kubeconfig } = sandbox();
  const signal = AbortSignal.timeout(600_000);
  const node = `dg-${randomBytes(3).toString('hex')}`;
  let workDir: string;
  let containerd: Containerd;
  let registry: Registry;
  let cri: CriClient;
  let daemon: EbbDaemon | undefined;
  let starts = 0;
  const refs: Record<'fresh' | 'collected', string> = { fresh: '', collected: '' };

  const startEbb = (highPercent: number): Promise<EbbDaemon> =>
    startEbbDaemon(
      {
        KUBECONFIG: kubeconfig,
        EBB_NODE_NAME: node,
        EBB_CRI_ENDPOINT: containerd.endpoint,
        EBB_HTTP_ADDRESS: '127.0.0.1',
        EBB_HTTP_PORT: '0',
        EBB_STATUS_FLUSH: '200ms',
        EBB_RECHECK_PERIOD: '10s',
        EBB_IMAGE_FS_HIGH_PERCENT: String(highPercent),
        EBB_LOG_LEVEL: 'debug',
      },
      join(workDir, `daemon-${++starts}.log`),
      signal,
    );

  const statusOf = async (image: string): Promise<ImageStatus | undefined> => {
    const list = await rest.get<ImageList>(imageListRef(node)).catch((err: unknown) => {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    });
    return list?.status?.images?.find((s) => s.image === image);
  };
  const waitStatus = (image: string, ok: (s: ImageStatus) => boolean, what: string, timeoutMs = WAIT.timeoutMs): Promise<ImageStatus> =>
    waitFor(
      async () => {
        const s = await statusOf(image);
        return s && ok(s) ? s : undefined;
      },
      { ...WAIT, timeoutMs, signal, what },
    );
  /** The value of printer column `column` for the node's ImageList, as `kubectl get ebimg` receives it (a Table). */
  const printedColumn = async (column: string): Promise<unknown> => {
    const table = await rest.request<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>(
      'GET',
      `/apis/apps.ebb.dev/v1alpha1/imagelists/${node}`,
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    );
    const index = table.columnDefinitions.findIndex((c) => c.name === column);
    return index < 0 ? `no column ${column}` : table.rows[0]?.cells[index];
  };
  const pullsOf = async (ref: string): Promise<number> => (await containerd.imageRequests()).filter((r) => r.method === 'PullImage' && r.image === ref).length;

  beforeAll(async () => {
    await checkRuntimePackages();
    workDir = await mkdtemp(join(tmpdir(), 'ebb-dg-'));
    [containerd, registry] = await Promise.all([startContainerd(signal, { logLevel: 'trace' }), startRegistry({ signal })]);
    cri = CriClient.connect(containerd.endpoint, { callTimeoutMs: 10_000 });
    for (const tag of ['fresh', 'collected'] as const) {
      await pushImage(registry.url, { repo: REPO, tag }, buildImage({ 'tag.txt': `${tag}\n` }), { signal });
      refs[tag] = `${registry.host}/${REPO}:${tag}`;
    }
  });

  afterAll(async () => {
    await daemon?.child.stop();
    await rest.delete(imageListRef(node)).catch(() => undefined);
    cri?.close();
    await Promise.all([containerd?.dispose(), registry?.dispose()]);
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('reads the image filesystem through CRI ImageFsInfo and statfs, and defers a pull above the threshold, saying why in the status', async () => {
    daemon = await startEbb(1);
    await rest.create<ImageList>(imageListRef(), {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: node },
      spec: { images: [{ image: refs.fresh }] },
    });

    const deferred = await waitStatus(refs.fresh, (s) => s.phase === 'Deferred', 'the pull Deferred');
    // The filesystem named is the one containerd answers ImageFsInfo with; the percent is statfs's, as the kubelet computes it.
    const [fs] = await cri.imageFsInfo({ signal });
    expect(fs?.mountpoint).toMatch(new RegExp(`^${containerd.dir}/root/io\\.containerd\\.snapshotter\\.v1\\.`));
    const s = await statfs(fs?.mountpoint ?? '');
    const percent = usedPercent(s.blocks * s.bsize, s.bavail * s.bsize);
    const message = deferred.message ?? '';
    const shown = Number(/ is (\d+)% used/.exec(message)?.[1]);
    expect(Math.abs(shown - percent)).toBeLessThanOrEqual(1);
    expect(message).toBe(
      `image filesystem ${fs?.mountpoint} is ${shown}% used, at or above the 1% threshold (EBB_IMAGE_FS_HIGH_PERCENT): pull deferred until usage falls below it`,
    );
    expect(deferred.imageRef).toBeUndefined();
    // It was looked up (absent), never pulled: nothing reached containerd's PullImage, nor the registry.
    expect((await containerd.imageRequests()).filter((r) => r.image === refs.fresh).map((r) => r.method)).toEqual(['ImageStatus']);
    expect(await registry.manifestRequests(REPO)).toEqual([]);
    expect(await cri.imageStatus(refs.fresh, { signal })).toBeUndefined();
    expect(Math.abs(((await daemon.metric('ebb_daemon_image_fs_used_percent')) ?? -100) - percent)).toBeLessThanOrEqual(1);
    await daemon.logged('image pull deferred: image filesystem too full', (l) => l['image'] === refs.fresh);
    // `kubectl get ebimg` names it.
    expect(await printedColumn('Deferred')).toBe(refs.fresh);
  });

  it('does not pull back an image the kubelet garbage-collected while the filesystem is above the threshold', async () => {
    // The kubelet pulled it for a pod: present, so the daemon reports it Pulled without a pull of its own.
    await cri.pullImage(refs.collected, { signal });
    await rest.patch<ImageList>(imageListRef(node), { spec: { images: [{ image: refs.fresh }, { image: refs.collected }] } }, PatchType.merge);
    const pulled = await waitStatus(refs.collected, (s) => s.phase === 'Pulled', 'present image Pulled');
    expect(pulled.lastPullTime).toBeUndefined();

    // Image garbage collection removes it; the next re-check (10 s) finds it gone and defers its return.
    await cri.removeImage(refs.collected, { signal });
    const deferred = await waitStatus(refs.collected, (s) => s.phase === 'Deferred', 'the collected image Deferred', 40_000);
    expect(deferred.message).toMatch(/ is \d+% used, at or above the 1% threshold \(EBB_IMAGE_FS_HIGH_PERCENT\): pull deferred/);
    // The one PullImage is the kubelet's (the test's); the daemon made none.
    expect(await pullsOf(refs.collected)).toBe(1);
    expect(await cri.imageStatus(refs.collected, { signal })).toBeUndefined();
  });

  it('pulls both once the threshold is above the usage', async () => {
    await daemon?.child.stop();
    daemon = await startEbb(100);
    for (const ref of [refs.fresh, refs.collected]) {
      const s = await waitStatus(ref, (st) => st.phase === 'Pulled' && st.lastPullTime !== undefined, `${ref} pulled`);
      expect(s.message).toBeUndefined();
    }
    expect(await pullsOf(refs.fresh)).toBe(1);
    expect(await pullsOf(refs.collected)).toBe(2);
  });
});
