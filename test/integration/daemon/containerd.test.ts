/**
 * `ebb daemon` as its own process against a real containerd and real docker-registries (the Debian packages
 * the runtime tests use, as child processes) and the sandbox apiserver. Each test reads three witnesses: the
 * ImageList status the daemon writes, the registry's access log, and the image calls containerd's CRI plugin
 * logged (containerd runs at log level trace, where it logs ImageStatus as well as PullImage).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList, ImageListEntry, ImageStatus } from '../../../src/api/image-list.ts';
import { sleep, waitFor } from '../../../src/common/wait.ts';
import { CriClient } from '../../../src/cri/client.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { startContainerd, type Containerd } from '../../runtime/containerd.ts';
import checkRuntimePackages from '../../runtime/global-setup.ts';
import { buildImage, pushImage, type OciImage } from '../../../harness/sandbox/real-node/oci-image.ts';
import { startRegistry, type AccessLogEntry, type Registry } from '../../runtime/registry.ts';
import { copyPullSecrets, createPullSecret, freshNamespace, sandbox } from '../support.ts';
import { startEbbDaemon, type EbbDaemon } from './ebb-daemon.ts';
import { startRegistryGate, type RegistryGate } from './registry-gate.ts';

/** The times a Pulled entry carries, whatever their values. */
const PULLED_TIMES = {
  lastPullTime: expect.any(String) as unknown,
  pullStartTime: expect.any(String) as unknown,
  lastPullDurationMillis: expect.any(Number) as unknown,
};
const REPO = 'ebb/app';
const PRIVATE_REPO = 'ebb/private';
const SLOW_REPO = 'ebb/slow';
const CREDENTIAL = { username: 'robot', password: `pw-${randomBytes(12).toString('hex')}` };
const WAIT = { timeoutMs: 30_000, intervalMs: 100 };
/** The daemon's retry delays: short, so that backoff shows within seconds. */
const BACKOFF = { baseMs: 500, maxMs: 3_000 };

interface Pushed {
  image: OciImage;
  digest: string;
  ref: string;
}

/** RFC 3339 with second precision, as the ImageList fields are written. */
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const base64 = (s: string): string => Buffer.from(s).toString('base64');

describe('ebb daemon against containerd and a registry', () => {
  const { rest, kubeconfig } = sandbox();
  const signal = AbortSignal.timeout(900_000);
  const node = `cd-${randomBytes(3).toString('hex')}`;
  let workDir: string;
  let containerd: Containerd;
  let registry: Registry;
  let privateRegistry: Registry;
  let gate: RegistryGate;
  let cri: CriClient;
  let daemon: EbbDaemon;
  /** Where the worker would copy pull secrets: the only namespace the daemon reads Secrets in. */
  let copies = '';
  let daemonStarts = 0;
  const pushed: Record<'v1' | 'v2' | 'v3' | 'recovered' | 'moved' | 'private' | 'slow', Pushed> = {} as never;

  const push = async (reg: Registry, repo: string, tag: string, files: Record<string, string>, auth?: typeof CREDENTIAL): Promise<Pushed> => {
    const image = buildImage(files);
    const digest = await pushImage(reg.url, { repo, tag }, image, { signal, ...(auth ? { auth } : {}) });
    return { image, digest, ref: `${reg.host}/${repo}:${tag}` };
  };

  const startEbb = async (): Promise<EbbDaemon> => {
    daemonStarts++;
    return startEbbDaemon(
      {
        KUBECONFIG: kubeconfig,
        EBB_NODE_NAME: node,
        EBB_CRI_ENDPOINT: containerd.endpoint,
        EBB_HTTP_ADDRESS: '127.0.0.1',
        EBB_HTTP_PORT: '0',
        EBB_STATUS_FLUSH: '200ms',
        EBB_PULL_BACKOFF_BASE: `${BACKOFF.baseMs}ms`,
        EBB_PULL_BACKOFF_MAX: `${BACKOFF.maxMs}ms`,
        EBB_RECHECK_PERIOD: '10s',
        EBB_PULL_TIMEOUT: '60s',
        EBB_PULL_SECRET_NAMESPACE: copies,
        // containerd's root is on the host's disk, whatever its usage: no disk guard here (disk-guard.test.ts has it).
        EBB_IMAGE_FS_HIGH_PERCENT: '100',
        // The most the daemon ever logs: the credential search below covers every line it can write.
        EBB_LOG_LEVEL: 'debug',
      },
      join(workDir, `daemon-${daemonStarts}.log`),
      signal,
    );
  };

  const list = (): Promise<ImageList | undefined> =>
    rest.get<ImageList>(imageListRef(node)).catch((err: unknown) => {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    });
  const statusOf = async (img: string): Promise<ImageStatus | undefined> => (await list())?.status?.images?.find((s) => s.image === img);
  const waitStatus = (img: string, ok: (s: ImageStatus) => boolean, what: string, timeoutMs = WAIT.timeoutMs): Promise<ImageStatus> =>
    waitFor(
      async () => {
        const s = await statusOf(img);
        return s && ok(s) ? s : undefined;
      },
      { ...WAIT, timeoutMs, signal, what },
    );
  const setImages = (images: ImageListEntry[]): Promise<ImageList> => rest.patch<ImageList>(imageListRef(node), { spec: { images } }, PatchType.merge);
  /** The registry's manifest requests for `repo` after the first `from`, once there are at least `count`. */
  const newManifestRequests = (reg: Registry, repo: string, from: number, count: number): Promise<AccessLogEntry[]> =>
    waitFor(
      async () => {
        const added = (await reg.manifestRequests(repo)).slice(from);
        return added.length >= count ? added : undefined;
      },
      { ...WAIT, signal, what: `${count} manifest requests for ${repo}` },
    );
  const pullRequestsOf = async (ref: string): Promise<number> =>
    (await containerd.imageRequests()).filter((r) => r.method === 'PullImage' && r.image === ref).length;

  beforeAll(async () => {
    await checkRuntimePackages();
    workDir = await mkdtemp(join(tmpdir(), 'ebb-cdt-'));
    copies = await freshNamespace('copies');
    [containerd, registry, privateRegistry] = await Promise.all([
      startContainerd(signal, { logLevel: 'trace' }),
      startRegistry({ signal }),
      startRegistry({ auth: CREDENTIAL, signal }),
    ]);
    gate = await startRegistryGate(registry.url);
    cri = CriClient.connect(containerd.endpoint, { callTimeoutMs: 10_000 });
    pushed.v1 = await push(registry, REPO, 'v1', { 'version.txt': 'v1\n' });
    pushed.v2 = await push(registry, REPO, 'v2', { 'version.txt': 'v2\n' });
    pushed.v3 = await push(registry, REPO, 'v3', { 'version.txt': 'v3\n' });
    pushed.recovered = await push(registry, REPO, 'recovered', { 'version.txt': 'pulled after a containerd restart\n' });
    pushed.private = await push(privateRegistry, PRIVATE_REPO, 'v1', { 'secret.txt': 'private\n' }, CREDENTIAL);
    // Pulled through the gate, which holds its layer download while closed: the same registry, another address.
    const slow = await push(registry, SLOW_REPO, 'v1', { 'layer.txt': randomBytes(64 * 1024).toString('hex') });
    pushed.slow = { ...slow, ref: `${gate.host}/${SLOW_REPO}:v1` };
    daemon = await startEbb();
  });

  afterAll(async () => {
    await daemon?.child.stop();
    await rest.delete(imageListRef(node)).catch(() => undefined);
    cri?.close();
    await Promise.all([containerd?.dispose(), registry?.dispose(), privateRegistry?.dispose(), gate?.dispose()]);
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('is ready once containerd answers CRI Version and its watch is up', async () => {
    await waitFor(async () => ((await daemon.get('/readyz')).status === 200 ? true : undefined), { ...WAIT, signal, what: '/readyz 200' });
    expect(await daemon.metric('ebb_daemon_runtime_up')).toBe(1);
    await daemon.logged('container runtime answers', (l) => l['runtime'] === 'containerd');
  });

  it('pulls v1 and v2 and reports imageRef (the image ID containerd gives) and lastPullTime', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const created = await rest.create<ImageList>(imageListRef(), {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: node },
      spec: { images: [{ image: pushed.v1.ref }, { image: pushed.v2.ref }] },
    });

    for (const p of [pushed.v1, pushed.v2]) {
      const s = await waitStatus(p.ref, (s) => s.phase === 'Pulled', `${p.ref} Pulled`);
      expect(s).toEqual({
        image: p.ref,
        phase: 'Pulled',
        imageRef: p.image.id,
        attempts: 1,
        lastPullTime: expect.any(String) as unknown,
        pullStartTime: expect.any(String) as unknown,
        lastPullDurationMillis: expect.any(Number) as unknown,
      });
      expect(Date.parse(s.lastPullTime ?? '')).toBeGreaterThanOrEqual(before);
      expect(Date.parse(s.lastPullTime ?? '')).toBeLessThanOrEqual(Date.now());
      // containerd holds it under the tag, as the same image ID.
      expect(await cri.imageStatus(p.ref, { signal })).toMatchObject({ id: p.image.id, repoTags: [p.ref] });
      // The daemon looked the image up first (absent), then pulled it: one PullImage.
      const calls = (await containerd.imageRequests()).filter((r) => r.image === p.ref);
      expect(calls.slice(0, 2)).toEqual([
        { method: 'ImageStatus', image: p.ref },
        { method: 'PullImage', image: p.ref },
      ]);
      expect(calls.filter((c) => c.method === 'PullImage')).toHaveLength(1);
    }
    expect((await list())?.status?.observedGeneration).toBe(created.metadata.generation);
    // What the registry served for each tag: the tag resolved by HEAD, the manifest fetched by digest.
    const manifests = await registry.manifestRequests(REPO);
    expect(manifests).toHaveLength(4);
    expect(manifests).toEqual(
      expect.arrayContaining(
        [pushed.v1, pushed.v2].flatMap((p) => [
          { method: 'HEAD', path: `/v2/${REPO}/manifests/${p.ref.split(':').pop()}`, status: 200 },
          { method: 'GET', path: `/v2/${REPO}/manifests/${p.digest}`, status: 200 },
        ]),
      ),
    );
    expect(await daemon.metric('ebb_daemon_pulls_total{result="success"}')).toBe(2);
  });

  it('pulls a present image again when pullRequestedAt is set later: containerd only resolves the tag (manifest HEAD)', async () => {
    const before = await waitStatus(pushed.v1.ref, (s) => s.phase === 'Pulled', 'v1 Pulled');
    // lastPullTime has second precision: a second later, a new pull shows as a later time.
    await sleep(Math.max(0, Date.parse(before.lastPullTime ?? '') + 1_100 - Date.now()), signal);
    const logFrom = (await registry.manifestRequests(REPO)).length;
    const v2Before = await statusOf(pushed.v2.ref);

    const requested = rfc3339(Date.now());
    await setImages([{ image: pushed.v1.ref, pullRequestedAt: requested }, { image: pushed.v2.ref }]);

    const after = await waitStatus(pushed.v1.ref, (s) => s.observedPullRequestedAt === requested, 'the pull request answered');
    expect(after).toMatchObject({ phase: 'Pulled', imageRef: pushed.v1.image.id, attempts: 1 });
    expect(Date.parse(after.lastPullTime ?? '')).toBeGreaterThan(Date.parse(before.lastPullTime ?? ''));
    expect(await pullRequestsOf(pushed.v1.ref)).toBe(2);
    // containerd asked the registry for the tag again (HEAD) and, holding that manifest and its blobs,
    // fetched nothing else. v2, not requested, was neither pulled nor asked for.
    expect(await newManifestRequests(registry, REPO, logFrom, 1)).toEqual([{ method: 'HEAD', path: `/v2/${REPO}/manifests/v1`, status: 200 }]);
    expect(await pullRequestsOf(pushed.v2.ref)).toBe(1);
    expect(await statusOf(pushed.v2.ref)).toEqual(v2Before);
  });

  it('follows a tag that moved: a pull request fetches the new manifest and imageRef changes', async () => {
    pushed.moved = await push(registry, REPO, 'v1', { 'version.txt': 'v1, rebuilt\n' });
    const logFrom = (await registry.manifestRequests(REPO)).length;

    // Later than the previous request, which may carry this same second.
    const requested = rfc3339(Date.now() + 1_000);
    await setImages([{ image: pushed.v1.ref, pullRequestedAt: requested }, { image: pushed.v2.ref }]);

    const after = await waitStatus(pushed.v1.ref, (s) => s.observedPullRequestedAt === requested, 'the second pull request answered');
    expect(after).toMatchObject({ phase: 'Pulled', imageRef: pushed.moved.image.id, attempts: 1 });
    expect(pushed.moved.image.id).not.toBe(pushed.v1.image.id);
    expect(await newManifestRequests(registry, REPO, logFrom, 2)).toEqual([
      { method: 'HEAD', path: `/v2/${REPO}/manifests/v1`, status: 200 },
      { method: 'GET', path: `/v2/${REPO}/manifests/${pushed.moved.digest}`, status: 200 },
    ]);
    expect(await cri.imageStatus(pushed.v1.ref, { signal })).toMatchObject({ id: pushed.moved.image.id });
  });

  it('reports a missing tag as Failed with NotFound naming the image, and retries with backoff rather than in a loop', async () => {
    const missing = `${registry.host}/${REPO}:missing`;
    const heads = async (): Promise<number> => (await registry.manifestRequests(REPO)).filter((e) => e.path === `/v2/${REPO}/manifests/missing`).length;
    await setImages([{ image: pushed.v1.ref }, { image: pushed.v2.ref }, { image: missing }]);

    const first = await waitStatus(missing, (s) => s.phase === 'Failed', 'missing tag Failed');
    expect(first.message).toBe(
      `NotFound: CRI PullImage: failed to pull and unpack image "${missing}": failed to resolve reference "${missing}": ${missing}: not found`,
    );
    expect(first.imageRef).toBeUndefined();

    const windowMs = 8_000;
    await sleep(windowMs, signal);
    const later = await waitStatus(missing, (s) => s.phase === 'Failed', 'missing tag still Failed');
    const retries = (later.attempts ?? 0) - (first.attempts ?? 0);
    // Every retry waits between the base and the cap: at least 2 in 8 s, at most 8 s / 0.5 s. Without
    // backoff, a NotFound answered within milliseconds would make hundreds.
    expect(retries).toBeGreaterThanOrEqual(2);
    expect(retries).toBeLessThanOrEqual(windowMs / BACKOFF.baseMs);
    // Each attempt is one pull, and containerd resolves the tag once per pull (HEAD, 404).
    const attempts = later.attempts ?? 0;
    expect(await heads()).toBeGreaterThanOrEqual(attempts);
    expect(await heads()).toBeLessThanOrEqual(attempts + 1);
    expect(
      (await registry.manifestRequests(REPO)).filter((e) => e.path === `/v2/${REPO}/manifests/missing`).every((e) => e.method === 'HEAD' && e.status === 404),
    ).toBe(true);
    const failures = (await daemon.lines()).filter((l) => l.msg === 'image pull failed' && l['image'] === missing);
    expect(failures.length).toBeGreaterThanOrEqual(attempts - 1);
    for (const f of failures) {
      expect(f['code']).toBe('NotFound');
      expect(f['retryInMs']).toBeGreaterThanOrEqual(BACKOFF.baseMs - 50);
      expect(f['retryInMs']).toBeLessThanOrEqual(BACKOFF.maxMs + 50);
    }
    expect(await daemon.metric('ebb_daemon_pulls_total{result="NotFound"}')).toBeGreaterThanOrEqual(attempts - 1);

    await setImages([{ image: pushed.v1.ref }, { image: pushed.v2.ref }]);
    await waitFor(async () => ((await list())?.status?.images?.length === 2 ? true : undefined), {
      ...WAIT,
      signal,
      what: 'the missing tag leaves the status',
    });
  });

  it('fails references the CRD admits but a runtime refuses, naming the entry, and never sends them to containerd', async () => {
    const bad: Array<[string, string]> = [
      [`${registry.host}/${'a'.repeat(300)}:v1`, 'repository name is longer than 255 characters'],
      [`${registry.host}/${REPO}@sha256:${'a'.repeat(40)}`, 'a sha256 digest has 64 hex digits, not 40'],
      [`${registry.host}/${REPO}@sha256:${'A'.repeat(64)}`, 'digest hex digits must be lower case'],
      [`${registry.host}/${REPO}@sha1:${'a'.repeat(40)}`, 'digest algorithm "sha1" is not supported (sha256, sha384 or sha512)'],
    ];
    const accessBefore = (await registry.accessLog()).length;
    await setImages([{ image: pushed.v1.ref }, ...bad.map(([image]) => ({ image })), { image: pushed.v3.ref }]);

    for (const [image, reason] of bad) {
      const s = await waitStatus(image, (s) => s.phase === 'Failed', `${image.slice(0, 60)}… Failed`);
      expect(s).toEqual({ image, phase: 'Failed', message: `invalid image reference ${JSON.stringify(image)}: ${reason}` });
    }
    // The entry after them was served: the daemon did work, and none of it was for the bad ones.
    await waitStatus(pushed.v3.ref, (s) => s.phase === 'Pulled', 'v3 Pulled');
    const calls = await containerd.imageRequests();
    expect(calls).toContainEqual({ method: 'PullImage', image: pushed.v3.ref });
    expect(calls.filter((c) => bad.some(([image]) => c.image === image))).toEqual([]);
    const containerdLog = await readFile(containerd.logPath, 'utf8');
    for (const [image] of bad) expect(containerdLog).not.toContain(image);
    const paths = (await registry.accessLog()).slice(accessBefore).map((e) => e.path);
    expect(paths.some((p) => p.includes('aaaaaaaaaa') || p.includes('AAAAAAAAAA') || p.includes('sha1:'))).toBe(false);
    expect((await cri.listImages({ signal })).flatMap((i) => [...i.repoTags, ...i.repoDigests]).filter((r) => bad.some(([image]) => r === image))).toEqual([]);
  });

  it('with containerd stopped: /readyz 503, runtime_up 0, the status says so, the daemon stays up; then it recovers by itself', async () => {
    await setImages([{ image: pushed.v1.ref }, { image: pushed.v2.ref }]);
    await waitFor(async () => ((await list())?.status?.images?.length === 2 ? true : undefined), { ...WAIT, signal, what: 'status settled' });
    let exited: number | string | undefined;
    void daemon.child.exited.then((e) => (exited = e));

    await containerd.stop();

    const notReady = await waitFor(
      async () => {
        const r = await daemon.get('/readyz');
        return r.status === 503 ? r.body : undefined;
      },
      { ...WAIT, signal, what: '/readyz 503' },
    );
    expect(notReady).toMatch(/^not ok: container runtime does not answer: CRI Version: /);
    expect(await daemon.metric('ebb_daemon_runtime_up')).toBe(0);
    expect((await daemon.get('/healthz')).status).toBe(200);
    await daemon.logged('container runtime does not answer');

    // The periodic lookup of a pulled image fails: it stays Pulled (nothing says it left the node), and its
    // message says why it could not be checked.
    const unchecked = await waitStatus(pushed.v2.ref, (s) => s.message !== undefined, 'v2 reports the failed lookup');
    expect(unchecked).toMatchObject({
      phase: 'Pulled',
      imageRef: pushed.v2.image.id,
      message: expect.stringMatching(/^container runtime: Unavailable: CRI ImageStatus: /) as unknown,
    });

    // A new entry while containerd is down: its lookup fails, and the status says why.
    const added = pushed.recovered.ref;
    await setImages([{ image: pushed.v1.ref }, { image: pushed.v2.ref }, { image: added }]);
    const waiting = await waitStatus(added, (s) => (s.message ?? '').includes('Unavailable'), 'the new entry reports the runtime unavailable');
    expect(waiting.phase).toBe('Pending');
    expect(waiting.message).toMatch(/^container runtime: Unavailable: CRI ImageStatus: /);
    await sleep(3_000, signal);
    expect(exited).toBeUndefined();

    await containerd.start(signal);

    const pulled = await waitStatus(added, (s) => s.phase === 'Pulled', 'the new entry Pulled after the restart', 60_000);
    expect(pulled).toEqual({ image: added, phase: 'Pulled', imageRef: pushed.recovered.image.id, attempts: 1, ...PULLED_TIMES });
    await waitFor(async () => ((await daemon.get('/readyz')).status === 200 ? true : undefined), { ...WAIT, signal, what: '/readyz 200 again' });
    expect(await daemon.metric('ebb_daemon_runtime_up')).toBe(1);
    // Same root: what was pulled before the restart is still there. The entries looked up while containerd
    // was down said so in their message; the next lookup clears it, and they stay Pulled without a new pull.
    expect(await cri.imageStatus(pushed.v1.ref, { signal })).toMatchObject({ id: pushed.moved.image.id });
    const settled = await waitFor(
      async () => {
        const images = (await list())?.status?.images ?? [];
        return images.length === 3 && images.every((s) => s.phase === 'Pulled' && s.message === undefined) ? images : undefined;
      },
      { ...WAIT, signal, what: 'every entry Pulled with no message' },
    );
    expect(settled.map((s) => s.imageRef)).toEqual([pushed.moved.image.id, pushed.v2.image.id, pushed.recovered.image.id]);
    expect(await pullRequestsOf(pushed.v2.ref)).toBe(1);
    expect(exited).toBeUndefined();
  });

  it('pulls with the pull secret from a registry with basic auth, is refused without it, and never shows the password', async () => {
    const ref = pushed.private.ref;
    const ns = await freshNamespace('cdauth');
    const auths = { [privateRegistry.host]: { username: CREDENTIAL.username, password: CREDENTIAL.password } };
    // What the Secret stores (createPullSecret encodes the same JSON), to look for in logs and status.
    const dockerConfig = JSON.stringify({ auths });
    await createPullSecret(ns, 'regcred', auths);
    const logFrom = (await privateRegistry.manifestRequests(PRIVATE_REPO)).length;

    await setImages([{ image: pushed.v1.ref }, { image: ref }]);
    const refused = await waitStatus(ref, (s) => s.phase === 'Failed', 'refused without credentials');
    expect(refused.message).toMatch(/^Auth: CRI PullImage: failed to pull and unpack image "/);
    expect(refused.message).toContain(ref);
    expect(refused.message).toContain('401 Unauthorized');
    expect(await cri.imageStatus(ref, { signal })).toBeUndefined();

    // The same image, now with its pull secret: the changed entry is tried again at once.
    // The worker's copy first, as if it had been quick: the daemon then meets no "unusable" attempt before it.
    const withSecret = [{ image: pushed.v1.ref }, { image: ref, pullSecret: { namespace: ns, name: 'regcred' } }];
    await copyPullSecrets(node, copies, withSecret);
    await setImages(withSecret);
    const pulled = await waitStatus(ref, (s) => s.phase === 'Pulled', 'pulled with the pull secret');
    expect(pulled).toMatchObject({ imageRef: pushed.private.image.id });
    expect(pulled.message).toBeUndefined();
    // The registry saw one anonymous HEAD per refused attempt (retried with backoff meanwhile), answered 401;
    // then the pull with credentials: containerd sends each request without them first, and again with them
    // after the 401 challenge.
    const refusedAttempts = (pulled.attempts ?? 0) - 1;
    expect(refusedAttempts).toBeGreaterThanOrEqual(1);
    const seen = (await privateRegistry.manifestRequests(PRIVATE_REPO)).slice(logFrom);
    expect(seen.slice(0, refusedAttempts)).toEqual(
      Array.from({ length: refusedAttempts }, () => ({ method: 'HEAD', path: `/v2/${PRIVATE_REPO}/manifests/v1`, status: 401 })),
    );
    expect(seen.slice(refusedAttempts)).toEqual([
      { method: 'HEAD', path: `/v2/${PRIVATE_REPO}/manifests/v1`, status: 401 },
      { method: 'HEAD', path: `/v2/${PRIVATE_REPO}/manifests/v1`, status: 200 },
      { method: 'GET', path: `/v2/${PRIVATE_REPO}/manifests/${pushed.private.digest}`, status: 401 },
      { method: 'GET', path: `/v2/${PRIVATE_REPO}/manifests/${pushed.private.digest}`, status: 200 },
    ]);

    const secrets = [CREDENTIAL.password, base64(`${CREDENTIAL.username}:${CREDENTIAL.password}`), base64(dockerConfig)];
    const output = await daemon.output();
    // The log is the right one, and speaks of this image.
    expect((await daemon.lines()).some((l) => l.msg === 'image pulled' && l['image'] === ref)).toBe(true);
    const status = JSON.stringify(await list());
    for (const s of secrets) {
      expect(output).not.toContain(s);
      expect(status).not.toContain(s);
    }
  });

  it('killed mid-pull (SIGKILL), comes back and finishes the pull: Pulled, with both attempts counted', async () => {
    const ref = pushed.slow.ref;
    const v1Before = await statusOf(pushed.v1.ref);
    const v1Pulls = await pullRequestsOf(pushed.v1.ref);
    gate.close();
    await setImages([{ image: pushed.v1.ref }, { image: ref }]);

    await waitStatus(ref, (s) => s.phase === 'Pulling', 'Pulling');
    await waitFor(() => (gate.requests().some((r) => r.path.includes('/blobs/') && r.state === 'held') ? true : undefined), {
      ...WAIT,
      signal,
      what: 'a held layer download',
    });
    expect(await statusOf(ref)).toEqual({ image: ref, phase: 'Pulling', attempts: 1, pullStartTime: expect.any(String) as unknown });

    await daemon.child.kill();
    expect(await daemon.child.exited).toBe('SIGKILL');

    // The CRI call died with the process: containerd cancelled the pull and dropped its download.
    await waitFor(() => (gate.requests().some((r) => r.path.includes('/blobs/') && r.state === 'dropped') ? true : undefined), {
      ...WAIT,
      signal,
      what: 'the held download dropped',
    });
    const failedPull = await waitFor(
      async () => {
        const lines = (await readFile(containerd.logPath, 'utf8')).split('\n').filter((l) => l.includes(`msg="PullImage \\"${ref}\\" failed"`));
        return lines.length > 0 ? lines : undefined;
      },
      { ...WAIT, signal, what: "containerd's log line of the cancelled pull" },
    );
    expect(failedPull).toHaveLength(1);
    expect(failedPull?.[0]).toContain('code = Canceled');
    expect(await cri.imageStatus(ref, { signal })).toBeUndefined();
    // Nobody wrote since: the status still says what the killed daemon last wrote.
    expect(await statusOf(ref)).toEqual({ image: ref, phase: 'Pulling', attempts: 1, pullStartTime: expect.any(String) as unknown });

    gate.open();
    daemon = await startEbb();

    const done = await waitStatus(ref, (s) => s.phase === 'Pulled', 'Pulled by the restarted daemon');
    expect(done).toEqual({ image: ref, phase: 'Pulled', imageRef: pushed.slow.image.id, attempts: 2, ...PULLED_TIMES });
    expect(await pullRequestsOf(ref)).toBe(2);
    // The restarted daemon looked v1 up and reported it as it was: no new pull.
    expect(await pullRequestsOf(pushed.v1.ref)).toBe(v1Pulls);
    expect(await statusOf(pushed.v1.ref)).toEqual(v1Before);
    expect(
      gate
        .requests()
        .filter((r) => r.path.includes('/blobs/'))
        .map((r) => r.state),
    ).toEqual(expect.arrayContaining(['dropped', 'done']));
  });
});
