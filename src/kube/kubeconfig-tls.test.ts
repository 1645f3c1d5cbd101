import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ensurePki, type Pki } from '../../harness/sandbox/pki.ts';
import { isKubeError } from './errors.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { KubeRest } from './rest.ts';

/**
 * The connection a kubeconfig yields, against a TLS server that requires a client certificate and would
 * speak HTTP/2 to a client that offers it (as the apiserver does).
 */
describe('connections from a kubeconfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ebb-kubeconfig-tls-'));
  let pki: Pki;
  let server: Http2SecureServer;
  let url: string;

  beforeAll(async () => {
    pki = await ensurePki(dir);
    server = createSecureServer(
      {
        key: readFileSync(pki.serverKey),
        cert: readFileSync(pki.serverCert),
        ca: readFileSync(pki.caCert),
        requestCert: true,
        rejectUnauthorized: true,
        allowHTTP1: true,
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ httpVersion: req.httpVersion, user: peer.subject.CN, authorization: req.headers.authorization ?? null }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function client(cluster: Record<string, unknown>, user: Record<string, unknown> = {}): KubeRest {
    const path = join(dir, 'kubeconfig');
    const b64 = (p: string): string => readFileSync(p).toString('base64');
    writeFileSync(
      path,
      stringify({
        clusters: [{ name: 'c', cluster: { server: url, ...cluster } }],
        users: [{ name: 'u', user: { 'client-certificate-data': b64(pki.clients.admin.cert), 'client-key': pki.clients.admin.key, ...user } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    return new KubeRest(loadKubeConfig(path));
  }

  type Seen = { httpVersion: string; user: string; authorization: string | null };

  it('uses HTTP/1.1, the cluster CA and the client certificate, and sends the token', async () => {
    const rest = client({ 'certificate-authority': pki.caCert }, { token: 'secret' });
    expect(await rest.request<Seen>('GET', '/version')).toEqual({ httpVersion: '1.1', user: 'admin', authorization: 'Bearer secret' });
  });

  it('verifies the server against tls-server-name', async () => {
    expect((await client({ 'certificate-authority': pki.caCert, 'tls-server-name': 'kubernetes.default' }).request<Seen>('GET', '/version')).user).toBe(
      'admin',
    );
    const wrong = client({ 'certificate-authority': pki.caCert, 'tls-server-name': 'wrong.example' }).request('GET', '/version');
    await expect(wrong).rejects.toSatisfy((err) => isKubeError(err, 'Unavailable'));
  });

  it('does not trust the server without its CA, unless insecure-skip-tls-verify is set', async () => {
    await expect(client({}).request('GET', '/version')).rejects.toSatisfy((err) => isKubeError(err, 'Unavailable'));
    expect((await client({ 'insecure-skip-tls-verify': true }).request<Seen>('GET', '/version')).user).toBe('admin');
  });
});
