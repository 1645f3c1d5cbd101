import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/common/wait.ts';
import { CriClient, isCriError, type CriError } from '../../src/cri/client.ts';
import { startContainerd, type Containerd } from './containerd.ts';
import { buildImage, pushImage, type OciImage } from '../../harness/sandbox/real-node/oci-image.ts';
import { startRegistry, type Registry } from './registry.ts';

const REPO = 'ebb/private';
const CREDENTIAL = { username: 'robot', password: 'Pa55-w0rd-for-tests' };

/** Pulls through containerd from a registry with htpasswd basic auth. */
describe('CRI pulls from a registry with basic auth', () => {
  const signal = AbortSignal.timeout(600_000);
  let containerd: Containerd;
  let registry: Registry;
  let client: CriClient;
  let image: OciImage;
  let ref: string;

  beforeAll(async () => {
    [containerd, registry] = await Promise.all([startContainerd(signal), startRegistry({ auth: CREDENTIAL, signal })]);
    client = CriClient.connect(containerd.endpoint, { callTimeoutMs: 10_000, pullTimeoutMs: 60_000 });
    image = buildImage({ 'secret.txt': 'private\n' });
    await pushImage(registry.url, { repo: REPO, tag: 'v1' }, image, { auth: CREDENTIAL, signal });
    ref = `${registry.host}/${REPO}:v1`;
  });

  afterAll(async () => {
    client?.close();
    await Promise.all([containerd?.dispose(), registry?.dispose()]);
  });

  it('refuses a pull without credentials with AuthFailed', async () => {
    const err = (await client.pullImage(ref, { signal }).catch((e: unknown) => e)) as CriError;

    expect(isCriError(err, 'AuthFailed')).toBe(true);
    // containerd gives no gRPC code for it: UNKNOWN, with the registry's answer in the message.
    expect(err).toMatchObject({ grpcCode: 2, method: 'PullImage', retryClass: 'permanent' });
    expect(err.message).toContain('401 Unauthorized');
    expect(await client.imageStatus(ref, { signal })).toBeUndefined();
  });

  it('refuses a pull with a wrong password with AuthFailed, without the password in the error', async () => {
    const wrong = { username: CREDENTIAL.username, password: 'wrong-Pa55-w0rd' };
    const err = (await client.pullImage(ref, { signal, auth: wrong }).catch((e: unknown) => e)) as CriError;

    expect(isCriError(err, 'AuthFailed')).toBe(true);
    const dump = JSON.stringify({ ...err, message: err.message, stack: err.stack });
    expect(dump).not.toContain(wrong.password);
    expect(dump).not.toContain(Buffer.from(`${wrong.username}:${wrong.password}`).toString('base64'));
  });

  it('ignores a credential for another registry', async () => {
    const other = { ...CREDENTIAL, serverAddress: 'https://registry.example.com' };
    const err: unknown = await client.pullImage(ref, { signal, auth: other }).catch((e: unknown) => e);

    expect(isCriError(err, 'AuthFailed')).toBe(true);
  });

  it('pulls with the username and password in AuthConfig', async () => {
    await expect(client.pullImage(ref, { signal, auth: CREDENTIAL })).resolves.toBe(image.id);

    expect(await client.imageStatus(ref, { signal })).toMatchObject({ id: image.id, repoTags: [ref] });
  });

  it('pulls with the base64 `auth` form of the credential for a server address, and each pull reaches the registry', async () => {
    const before = (await registry.manifestRequests(REPO)).length;
    const auth = Buffer.from(`${CREDENTIAL.username}:${CREDENTIAL.password}`).toString('base64');

    // A bare host:port, as docker config keys are written (the client turns it into a URL for containerd).
    await expect(client.pullImage(ref, { signal, auth: { auth, serverAddress: registry.host } })).resolves.toBe(image.id);

    // The image is present, yet containerd asks the registry: first without the credential (401 and its
    // challenge), then with it.
    const added = await waitFor(
      async () => {
        const log = (await registry.manifestRequests(REPO)).slice(before);
        return log.some((e) => e.status === 200) ? log : undefined;
      },
      { timeoutMs: 5_000, what: 'an authorised manifest request', signal },
    );
    expect(added).toEqual([
      { method: 'HEAD', path: `/v2/${REPO}/manifests/v1`, status: 401 },
      { method: 'HEAD', path: `/v2/${REPO}/manifests/v1`, status: 200 },
    ]);
  });
});
