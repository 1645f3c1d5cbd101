/**
 * The bounded, guarded HTTP of checks and notifications against a local server: answers capped by
 * Content-Length (before the body is read) and while streamed, redirects not followed, metadata and
 * connection-steering headers refused, hosts outside the namespace's allowlist and refused addresses never
 * dialled, and a name connected to at the address judged while the request keeps its name.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowEntries } from '../../../src/workers/egress/allowlist.ts';
import { checkHttp, MAX_CHECK_ANSWER_BYTES, webhookHttp, type CheckRequest } from '../../../src/workers/egress/outbound.ts';

const MiB = 1 << 20;

describe('tenant-directed HTTP', () => {
  let server: Server;
  let port = 0;
  const hits: { url: string; host: string | undefined }[] = [];
  /** Bytes the streaming endpoint wrote before its client went away. */
  let streamed = 0;
  let streamClosed: Promise<void> = Promise.resolve();

  const endless = (res: ServerResponse): void => {
    let closed: () => void = () => undefined;
    streamClosed = new Promise((r) => (closed = r));
    const chunk = Buffer.alloc(64 << 10, 'a');
    res.writeHead(200, { 'content-type': 'application/json' });
    const pump = (): void => {
      while (!res.destroyed && streamed < 200 * MiB) {
        streamed += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', closed);
    pump();
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push({ url: req.url ?? '', host: req.headers.host });
      if (req.url === '/declared') return res.writeHead(200, { 'content-length': String(150 * MiB) }).end();
      if (req.url === '/stream') return endless(res);
      if (req.url === '/redirect') return res.writeHead(302, { location: '/target' }).end();
      if (req.url === '/exact') return res.end(Buffer.alloc(MAX_CHECK_ANSWER_BYTES, 'b'));
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const signal = new AbortController().signal;
  const local = checkHttp({ allowedHosts: allowEntries(['*/127.0.0.1']), networks: 'local' });
  const get = (path: string, extra: Partial<CheckRequest> = {}): CheckRequest => ({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'GET',
    headers: {},
    timeoutMs: 10_000,
    ...extra,
  });

  it('reads an answer up to the cap', async () => {
    expect(await local('ns', get('/ok'), signal)).toEqual({ status: 200, text: '{"ok":true}' });
    expect((await local('ns', get('/exact'), signal)).text).toHaveLength(MAX_CHECK_ANSWER_BYTES);
  });

  it('refuses a declared Content-Length over the cap before reading the body', async () => {
    await expect(local('ns', get('/declared'), signal)).rejects.toMatchObject({
      code: 'TooLarge',
      message: expect.stringContaining('Content-Length') as string,
    });
  });

  it('cuts a streamed answer at the cap and closes the connection', async () => {
    streamed = 0;
    await expect(local('ns', get('/stream'), signal)).rejects.toMatchObject({
      code: 'TooLarge',
      message: `the answer is too large (over ${MAX_CHECK_ANSWER_BYTES} bytes)`,
    });
    await streamClosed;
    // The server stops once the client is gone: far less than the 200 MiB it would send (socket buffers aside).
    expect(streamed).toBeLessThan(32 * MiB);
  });

  it('does not follow a redirect', async () => {
    const before = hits.length;
    await expect(local('ns', get('/redirect'), signal)).rejects.toMatchObject({ code: 'Redirect', message: 'HTTP 302: redirects are not followed' });
    expect(hits.slice(before).map((h) => h.url)).toEqual(['/redirect']);
  });

  it.each(['Metadata-Flavor', 'metadata', 'X-aws-ec2-metadata-token', 'Host', 'Transfer-Encoding'])(
    'refuses the header %s without sending anything',
    async (name) => {
      const before = hits.length;
      await expect(local('ns', get('/ok', { headers: { [name]: 'Google' } }), signal)).rejects.toMatchObject({ code: 'HeaderRefused' });
      expect(hits.length).toBe(before);
    },
  );

  it('refuses a host not allowed for the namespace, naming the setting', async () => {
    const only = checkHttp({ allowedHosts: allowEntries(['team-a/127.0.0.1']), networks: 'local' });
    expect((await only('team-a', get('/ok'), signal)).status).toBe(200);
    const before = hits.length;
    await expect(only('team-b', get('/ok'), signal)).rejects.toMatchObject({
      code: 'HostNotAllowed',
      message: `127.0.0.1:${port} is not an allowed check host for namespace team-b (the worker setting EBB_CHECK_ALLOWED_HOSTS lists them)`,
    });
    await expect(checkHttp({ allowedHosts: [], networks: 'local' })('team-a', get('/ok'), signal)).rejects.toMatchObject({ code: 'HostNotAllowed' });
    expect(hits.length).toBe(before);
  });

  it('refuses loopback outside local scope, by IP (IPv4, IPv4-mapped IPv6) and by a name that resolves to it', async () => {
    const before = hits.length;
    const guarded = checkHttp({ allowedHosts: allowEntries(['*/*']), networks: 'private' }, (host) =>
      Promise.resolve(host === 'metrics.test' ? ['127.0.0.1'] : []),
    );
    await expect(guarded('ns', get('/ok'), signal)).rejects.toMatchObject({
      code: 'AddressRefused',
      message: expect.stringContaining('is a loopback address') as string,
    });
    await expect(guarded('ns', get('/ok', { url: `http://[::ffff:127.0.0.1]:${port}/ok` }), signal)).rejects.toMatchObject({ code: 'AddressRefused' });
    await expect(guarded('ns', get('/ok', { url: `http://metrics.test:${port}/ok` }), signal)).rejects.toMatchObject({
      code: 'AddressRefused',
      message: 'metrics.test resolves to a loopback address, which may not be called (EBB_CHECK_NETWORKS=private)',
    });
    await expect(guarded('ns', get('/ok', { url: 'http://169.254.169.254/computeMetadata/v1/' }), signal)).rejects.toMatchObject({
      code: 'AddressRefused',
      message: expect.stringContaining('a cloud metadata address') as string,
    });
    expect(hits.length).toBe(before);
  });

  it('connects to the address it judged, the request keeping its name', async () => {
    let lookups = 0;
    const pinned = checkHttp({ allowedHosts: allowEntries(['*/metrics.test']), networks: 'local' }, () => {
      lookups++;
      return Promise.resolve(['127.0.0.1']);
    });
    expect((await pinned('ns', get('/ok', { url: `http://metrics.test:${port}/named` }), signal)).status).toBe(200);
    expect(hits.at(-1)).toEqual({ url: '/named', host: `metrics.test:${port}` });
    expect(lookups).toBe(1);
  });

  it('refuses schemes other than http(s) and URLs with credentials', async () => {
    const any = checkHttp({ allowedHosts: allowEntries(['*/*']), networks: 'local' });
    await expect(any('ns', get('/', { url: 'file:///etc/passwd' }), signal)).rejects.toMatchObject({ code: 'BadUrl' });
    await expect(any('ns', get('/', { url: `http://u:p@127.0.0.1:${port}/` }), signal)).rejects.toMatchObject({ code: 'BadUrl' });
  });

  it('notifications: the same cap, no redirects, the address rules', async () => {
    const hook = webhookHttp('local');
    expect((await hook(`http://127.0.0.1:${port}/hook`, '{}', 5_000, signal)).status).toBe(200);
    await expect(hook(`http://127.0.0.1:${port}/redirect`, '{}', 5_000, signal)).rejects.toMatchObject({ code: 'Redirect' });
    await expect(hook(`http://127.0.0.1:${port}/stream`, '{}', 5_000, signal)).rejects.toMatchObject({ code: 'TooLarge' });
    await expect(webhookHttp('private')(`http://127.0.0.1:${port}/hook`, '{}', 5_000, signal)).rejects.toMatchObject({ code: 'AddressRefused' });
  });
});
