import { describe, expect, it } from 'vitest';
import { parseImageReference, type ImageReference } from '../../../src/api/image-ref.ts';
import { authsOfSecret, credentialsFor, type DockerAuths } from '../../../src/daemon/auth.ts';
import { pullAuthFrom, PullSecretError, type SecretReader } from '../../../src/daemon/secrets.ts';
import { KubeError } from '../../../src/kube/errors.ts';

function ref(image: string): ImageReference {
  const p = parseImageReference(image);
  if (!p.ok) throw new Error(p.reason);
  return p.ref;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const entry = (user: string) => ({ username: user, password: `${user}-pw` });

describe('credentialsFor', () => {
  it.each<[string, DockerAuths, string, string | undefined]>([
    // name, auths, image, the username expected (undefined: no credentials)
    ['a bare host', { 'registry.example.com': entry('a') }, 'registry.example.com/team/app:1', 'a'],
    ['an https URL', { 'https://registry.example.com': entry('a') }, 'registry.example.com/app:1', 'a'],
    ['a URL with the legacy /v1/ path', { 'https://registry.example.com/v1/': entry('a') }, 'registry.example.com/app:1', 'a'],
    ['a host with a /v2/ path', { 'registry.example.com/v2/': entry('a') }, 'registry.example.com/app:1', 'a'],
    ['Docker Hub as index.docker.io/v1/', { 'https://index.docker.io/v1/': entry('hub') }, 'nginx:1.27', 'hub'],
    ['Docker Hub as docker.io', { 'docker.io': entry('hub') }, 'library/redis', 'hub'],
    ['Docker Hub as registry-1.docker.io', { 'registry-1.docker.io': entry('hub') }, 'docker.io/team/app', 'hub'],
    ['host case does not matter', { 'Registry.Example.com': entry('a') }, 'registry.example.com/app:1', 'a'],
    ['a port must match', { 'localhost:5000': entry('a') }, 'localhost:5000/app:1', 'a'],
    ['another port does not match', { 'localhost:5000': entry('a') }, 'localhost:5001/app:1', undefined],
    ['a key without port does not match a host with one', { 'registry.example.com': entry('a') }, 'registry.example.com:8443/app:1', undefined],
    ['another host does not match', { 'other.example.com': entry('a') }, 'registry.example.com/app:1', undefined],
    ['a suffix of the host does not match', { 'example.com': entry('a') }, 'registry.example.com/app:1', undefined],
    ['a wildcard label matches one label', { '*.example.com': entry('w') }, 'registry.example.com/app:1', 'w'],
    ['a wildcard label does not match two', { '*.example.com': entry('w') }, 'a.b.example.com/app:1', undefined],
    ['an exact host beats a wildcard', { '*.example.com': entry('w'), 'registry.example.com': entry('exact') }, 'registry.example.com/app:1', 'exact'],
    [
      'a repository prefix beats the bare host',
      { 'registry.example.com': entry('host'), 'registry.example.com/team': entry('team') },
      'registry.example.com/team/app:1',
      'team',
    ],
    ['a repository prefix of another team does not match', { 'registry.example.com/other': entry('other') }, 'registry.example.com/team/app:1', undefined],
    ['Docker Hub credentials do not go to another registry', { 'https://index.docker.io/v1/': entry('hub') }, 'quay.io/team/app:1', undefined],
  ])('%s', (_name, auths, image, user) => {
    expect(credentialsFor(auths, ref(image))?.username).toBe(user);
  });

  it('decodes `auth` into username and password and keeps tokens', () => {
    const auths: DockerAuths = { 'registry.example.com': { auth: b64('robot:s3cr:et'), identitytoken: 'id-tok' } };
    expect(credentialsFor(auths, ref('registry.example.com/app'))).toEqual({
      serverAddress: 'registry.example.com',
      username: 'robot',
      password: 's3cr:et',
      identityToken: 'id-tok',
    });
  });
});

describe('authsOfSecret', () => {
  const dockerconfigjson = (config: unknown) => ({ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify(config)) } });

  it('reads the auths of a dockerconfigjson Secret', () => {
    expect(authsOfSecret(dockerconfigjson({ auths: { 'r.example.com': entry('a') } }))).toEqual({ ok: true, auths: { 'r.example.com': entry('a') } });
  });

  it('reads a legacy dockercfg Secret', () => {
    const s = { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ 'r.example.com': entry('a') })) } };
    expect(authsOfSecret(s)).toEqual({ ok: true, auths: { 'r.example.com': entry('a') } });
  });

  it.each([
    ['another type', { type: 'Opaque', data: { password: b64('hunter2') } }, /not kubernetes.io\/dockerconfigjson/],
    ['no data key', { type: 'kubernetes.io/dockerconfigjson', data: {} }, /no \.dockerconfigjson key/],
    ['not JSON', { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('hunter2 {') } }, /not JSON/],
    ['no auths', dockerconfigjson({ credsStore: 'x' }), /no auths object/],
  ])('rejects %s without quoting the content', (_name, secret, reason) => {
    const r = authsOfSecret(secret);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toMatch(reason);
      expect(r.reason).not.toContain('hunter2');
    }
  });
});

describe('pullAuthFrom', () => {
  const secret = { namespace: 'team', name: 'regcred' };
  const signal = new AbortController().signal;
  const failing =
    (err: Error): SecretReader =>
    () =>
      Promise.reject(err);

  it.each([
    ['a missing copy', new KubeError('NotFound', 404, 'secrets "regcred" not found'), 'NotFound'],
    ['a forbidden copy', new KubeError('Forbidden', 403, 'forbidden'), 'Forbidden'],
    ['credentials the apiserver refuses', new KubeError('Unauthorized', 401, 'Unauthorized'), 'Forbidden'],
    ['an apiserver that does not answer', new KubeError('Unavailable', 0, 'down'), 'Unavailable'],
    ['pull secrets not enabled', new PullSecretError('Disabled', secret), 'Disabled'],
  ])('%s is a PullSecretError that says only "unusable"', async (_name, err, code) => {
    const e = await pullAuthFrom(failing(err), secret, ref('r.example.com/app'), signal).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PullSecretError);
    expect(e).toMatchObject({ code, message: 'pull secret team/regcred is unusable' });
  });

  it('a Secret that is not a pull secret is unusable too, with nothing about its type', async () => {
    const read: SecretReader = () => Promise.resolve({ type: 'Opaque', data: { password: b64('x') } });
    const e = await pullAuthFrom(read, secret, ref('r.example.com/app'), signal).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'Invalid', message: 'pull secret team/regcred is unusable' });
  });

  it('gives the matching credentials, or none when the Secret has none for the registry', async () => {
    const read: SecretReader = () =>
      Promise.resolve({
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'r.example.com': entry('a') } })) },
      });
    expect(await pullAuthFrom(read, secret, ref('r.example.com/app'), signal)).toEqual({ serverAddress: 'r.example.com', username: 'a', password: 'a-pw' });
    expect(await pullAuthFrom(read, secret, ref('quay.io/app'), signal)).toBeUndefined();
  });
});
