import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeConfigError, inClusterConfig, loadKubeConfig, type KubeConfig } from './kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'ebb-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Writes `<dir>/<name>` with `text`; returns the path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

interface Doc {
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown> | undefined;
  context?: Record<string, unknown>;
  currentContext?: string | undefined;
}

/** A one-context kubeconfig (context "ctx", cluster "c", user "u") written to `<dir>/<name>`. */
function kubeconfig(name: string, doc: Doc = {}): string {
  return file(
    name,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: doc.cluster ?? { server: 'https://10.0.0.1:6443/', 'certificate-authority-data': b64('CA') } }],
      users: doc.user === undefined ? [] : [{ name: 'u', user: doc.user }],
      contexts: [{ name: 'ctx', context: doc.context ?? { cluster: 'c', ...(doc.user ? { user: 'u' } : {}) } }],
      'current-context': 'currentContext' in doc ? doc.currentContext : 'ctx',
    }),
  );
}

function failure(fn: () => unknown): KubeConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KubeConfigError) return err;
    throw err;
  }
  throw new Error('expected a KubeConfigError');
}

async function authorization(config: KubeConfig): Promise<string | undefined> {
  return (await config.credentials()).headers['authorization'];
}

describe('loadKubeConfig: clusters and users', () => {
  it('reads server, CA and client certificate from embedded data', async () => {
    const c = loadKubeConfig(kubeconfig('data.yaml', { user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') } }));
    expect(c.server).toBe('https://10.0.0.1:6443');
    expect(c.tls).toEqual({ ca: Buffer.from('CA'), cert: Buffer.from('CERT'), key: Buffer.from('KEY') });
    expect(c.source).toContain('(context "ctx")');
    expect(await c.credentials()).toEqual({ headers: {} });
  });

  it('reads certificate files relative to the kubeconfig that names them', () => {
    file('ca.crt', 'CA-FILE');
    file('client.crt', 'CERT-FILE');
    file('client.key', 'KEY-FILE');
    const c = loadKubeConfig(
      kubeconfig('files.yaml', {
        cluster: { server: 'https://k:6443', 'certificate-authority': 'ca.crt', 'tls-server-name': 'kubernetes.default' },
        user: { 'client-certificate': 'client.crt', 'client-key': join(dir, 'client.key') },
      }),
    );
    expect(c.tls).toEqual({ ca: Buffer.from('CA-FILE'), cert: Buffer.from('CERT-FILE'), key: Buffer.from('KEY-FILE'), servername: 'kubernetes.default' });
  });

  it('insecure-skip-tls-verify turns verification off and ignores the CA', () => {
    const c = loadKubeConfig(
      kubeconfig('insecure.yaml', { cluster: { server: 'https://k', 'insecure-skip-tls-verify': true, 'certificate-authority': 'nowhere.crt' } }),
    );
    expect(c.tls).toEqual({ rejectUnauthorized: false });
  });

  it('a token, a token file (re-read at every refresh), basic credentials and impersonation become headers', async () => {
    expect(await authorization(loadKubeConfig(kubeconfig('token.yaml', { user: { token: 'abc' } })))).toBe('Bearer abc');
    const tokenFile = file('token', 'first\n');
    const fromFile = loadKubeConfig(kubeconfig('tokenfile.yaml', { user: { tokenFile: 'token' } }));
    expect(await authorization(fromFile)).toBe('Bearer first');
    file('token', 'rotated');
    expect(await authorization(fromFile)).toBe('Bearer rotated');
    rmSync(tokenFile);
    expect(await authorization(fromFile), 'the last token while the file is missing').toBe('Bearer rotated');
    const basic = loadKubeConfig(kubeconfig('basic.yaml', { user: { username: 'ann', password: 'pw', as: 'bob' } }));
    expect((await basic.credentials()).headers).toEqual({ authorization: `Basic ${b64('ann:pw')}`, 'impersonate-user': 'bob' });
  });

  it('a context without a user connects anonymously', async () => {
    expect(await loadKubeConfig(kubeconfig('anon.yaml', { context: { cluster: 'c' } })).credentials()).toEqual({ headers: {} });
  });

  it('merges a KUBECONFIG list as kubectl does: the first definition and the first current-context win, missing files are skipped', async () => {
    const first = file('first.yaml', stringify({ users: [{ name: 'u', user: { token: 'from-first' } }] }));
    const second = kubeconfig('second.yaml', { user: { token: 'from-second' } });
    const c = loadKubeConfig([join(dir, 'missing.yaml'), first, second].join(':'));
    expect(await authorization(c)).toBe('Bearer from-first');
    expect(c.server).toBe('https://10.0.0.1:6443');
    expect(c.source).toContain(second);
  });

  it('an http(s) proxy-url is used; other proxy schemes are refused', () => {
    expect(loadKubeConfig(kubeconfig('proxy.yaml', { cluster: { server: 'https://k', 'proxy-url': 'http://proxy:3128' } })).proxyUrl).toBe('http://proxy:3128');
    const err = failure(() => loadKubeConfig(kubeconfig('socks.yaml', { cluster: { server: 'https://k', 'proxy-url': 'socks5://p:1080' } })));
    expect(err.code).toBe('Invalid');
    expect(err.message).toContain('socks5://p:1080');
  });
});

describe('loadKubeConfig: errors name the file and the entry', () => {
  it('a missing file', () => {
    const missing = join(dir, 'nope.yaml');
    const err = failure(() => loadKubeConfig(missing));
    expect(err.code).toBe('NotFound');
    expect(err.message).toContain(missing);
  });

  it('unparsable YAML, or YAML that is not a kubeconfig', () => {
    const garbage = file('garbage.yaml', 'clusters: [\n  - {name: x\n');
    expect(failure(() => loadKubeConfig(garbage))).toMatchObject({ code: 'Unparsable', message: expect.stringContaining(garbage) as string });
    const list = file('list.yaml', '- a\n- b\n');
    expect(failure(() => loadKubeConfig(list))).toMatchObject({ code: 'Unparsable', message: expect.stringContaining(list) as string });
    const nameless = file('nameless.yaml', stringify({ clusters: [{ cluster: { server: 'https://k' } }] }));
    expect(failure(() => loadKubeConfig(nameless)).message).toContain('clusters[0] has no name');
  });

  it('no current-context, or one that is not defined', () => {
    expect(failure(() => loadKubeConfig(kubeconfig('nocontext.yaml', { currentContext: undefined }))).code).toBe('NoContext');
    const path = kubeconfig('badcontext.yaml', { currentContext: 'other' });
    expect(failure(() => loadKubeConfig(path))).toMatchObject({ code: 'MissingContext', message: expect.stringContaining('"other"') as string });
  });

  it('--context picks another context of the same files, with its own namespace; an unknown one is named', () => {
    const path = file(
      'two.yaml',
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'a', cluster: { server: 'https://a.example' } },
          { name: 'b', cluster: { server: 'https://b.example' } },
        ],
        contexts: [
          { name: 'dev', context: { cluster: 'a', namespace: 'team-dev' } },
          { name: 'prod', context: { cluster: 'b', namespace: 'team-prod' } },
        ],
        'current-context': 'dev',
      }),
    );
    expect(loadKubeConfig(path)).toMatchObject({ server: 'https://a.example', namespace: 'team-dev' });
    expect(loadKubeConfig(path, { context: 'prod' })).toMatchObject({ server: 'https://b.example', namespace: 'team-prod' });
    const err = failure(() => loadKubeConfig(path, { context: 'staging' }));
    expect(err.code).toBe('MissingContext');
    expect(err.message).toContain('context "staging" is not defined');
  });

  it('a context naming a cluster or user that is not defined', () => {
    const noCluster = failure(() => loadKubeConfig(kubeconfig('nocluster.yaml', { context: { cluster: 'elsewhere', user: 'u' }, user: {} })));
    expect(noCluster.code).toBe('MissingCluster');
    expect(noCluster.message).toMatch(/context "ctx" names cluster "elsewhere".*nocluster\.yaml/);
    const noUser = failure(() => loadKubeConfig(kubeconfig('nouser.yaml', { context: { cluster: 'c', user: 'ghost' } })));
    expect(noUser.code).toBe('MissingUser');
    expect(noUser.message).toMatch(/context "ctx" names user "ghost".*nouser\.yaml/);
  });

  it('a cluster without a server, or with a field of the wrong type', () => {
    expect(failure(() => loadKubeConfig(kubeconfig('noserver.yaml', { cluster: {} }))).message).toMatch(/cluster "c" in .*noserver\.yaml has no server/);
    expect(failure(() => loadKubeConfig(kubeconfig('badbool.yaml', { cluster: { server: 'https://k', 'insecure-skip-tls-verify': 'yes' } }))).code).toBe(
      'Invalid',
    );
  });

  it('an unreadable certificate, key or token file', () => {
    const ca = failure(() => loadKubeConfig(kubeconfig('noca.yaml', { cluster: { server: 'https://k', 'certificate-authority': 'missing-ca.crt' } })));
    expect(ca.code).toBe('UnreadableFile');
    expect(ca.message).toContain(join(dir, 'missing-ca.crt'));
    expect(ca.message).toContain('certificate-authority of cluster "c"');
    const key = failure(() => loadKubeConfig(kubeconfig('nokey.yaml', { user: { 'client-certificate-data': b64('C'), 'client-key': 'missing.key' } })));
    expect(key.message).toMatch(/client-key of user "u" in .*nokey\.yaml/);
    expect(failure(() => loadKubeConfig(kubeconfig('notoken.yaml', { user: { tokenFile: 'missing-token' } }))).message).toContain('missing-token');
  });

  it('a client certificate without its key', () => {
    expect(failure(() => loadKubeConfig(kubeconfig('half.yaml', { user: { 'client-certificate-data': b64('C') } }))).message).toContain('must be set together');
  });
});

describe('in-cluster and default configuration', () => {
  const sa = join(dir, 'serviceaccount');
  mkdirSync(sa, { recursive: true });
  writeFileSync(join(sa, 'ca.crt'), 'SA-CA');
  writeFileSync(join(sa, 'token'), 'sa-token-1');
  const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

  it('uses the service account: server from the environment, its CA, its token re-read at every refresh', async () => {
    const c = inClusterConfig(inPod, sa);
    expect(c.server).toBe('https://10.96.0.1:443');
    expect(c.tls).toEqual({ ca: Buffer.from('SA-CA') });
    expect(await authorization(c)).toBe('Bearer sa-token-1');
    writeFileSync(join(sa, 'token'), 'sa-token-2');
    expect(await authorization(c)).toBe('Bearer sa-token-2');
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, sa).server).toBe('https://[fd00::1]:443');
  });

  it("takes the pod's namespace from the service account's namespace file, when there is one", () => {
    writeFileSync(join(sa, 'namespace'), 'shop\n');
    expect(inClusterConfig(inPod, sa).namespace).toBe('shop');
    rmSync(join(sa, 'namespace'));
    expect(inClusterConfig(inPod, sa).namespace).toBeUndefined();
  });

  it('a context asked for in a pod without a kubeconfig is an error, not the service account', () => {
    const err = failure(() => loadKubeConfig(undefined, { env: inPod, serviceAccountDir: sa, home: join(dir, 'no-home'), context: 'prod' }));
    expect(err.code).toBe('MissingContext');
    expect(err.message).toContain('context "prod"');
  });

  it('a missing service-account token names the file', () => {
    const err = failure(() => inClusterConfig(inPod, join(dir, 'no-sa')));
    expect(err.code).toBe('UnreadableFile');
    expect(err.message).toContain(join(dir, 'no-sa'));
  });

  it('looks at KUBECONFIG, then ~/.kube/config, then the service account', () => {
    const viaEnv = kubeconfig('env.yaml', { cluster: { server: 'https://from-env' } });
    expect(loadKubeConfig(undefined, { env: { KUBECONFIG: viaEnv, ...inPod }, serviceAccountDir: sa }).server).toBe('https://from-env');
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    expect(loadKubeConfig(undefined, { env: inPod, home, serviceAccountDir: sa }).server).toBe('https://10.96.0.1:443');
    writeFileSync(
      join(home, '.kube', 'config'),
      stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://from-home' } }],
        contexts: [{ name: 'x', context: { cluster: 'c' } }],
        'current-context': 'x',
      }),
    );
    expect(loadKubeConfig(undefined, { env: inPod, home, serviceAccountDir: sa }).server).toBe('https://from-home');
    const none = failure(() => loadKubeConfig(undefined, { env: {}, home: join(dir, 'nohome') }));
    expect(none.code).toBe('NotFound');
    expect(none.message).toContain('KUBECONFIG is unset');
  });
});

describe('exec plugins and auth providers', () => {
  const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-token' } };
  const exec = {
    apiVersion: 'client.authentication.k8s.io/v1',
    command: '/bin/sh',
    args: ['-c', `echo '${JSON.stringify(credential)}'`],
    interactiveMode: 'Never',
  };

  it('are served by @kubernetes/client-node', async () => {
    expect(await authorization(loadKubeConfig(kubeconfig('exec.yaml', { user: { exec } })))).toBe('Bearer exec-token');
  });

  it('a failing plugin is a KubeConfigError naming the user and the file', async () => {
    const c = loadKubeConfig(kubeconfig('exec-fails.yaml', { user: { exec: { ...exec, args: ['-c', 'exit 3'] } } }));
    await expect(c.credentials()).rejects.toMatchObject({
      name: 'KubeConfigError',
      message: expect.stringMatching(/user "u" in .*exec-fails\.yaml/) as string,
    });
  });

  it('a kubeconfig without them never loads @kubernetes/client-node', () => {
    const path = kubeconfig('static.yaml', { user: { token: 't' } });
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(spec, ctx, next) { seen.push(spec); return next(spec, ctx); } });
      const { loadKubeConfig, kubeDispatcher } = await import(${JSON.stringify(fileURLToPath(new URL('./kubeconfig.ts', import.meta.url)))});
      const c = loadKubeConfig(${JSON.stringify(path)});
      await kubeDispatcher(c, await c.credentials()).close();
      process.stdout.write(JSON.stringify(seen));`;
    const seen = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
    expect(seen).toContain('undici');
    expect(seen.filter((s) => s.includes('client-node'))).toEqual([]);
  });
});
