/**
 * The web provider: the condition language (pure), and measurements against a local HTTP server — GET and
 * POST, a header from a Secret, answers that fail, pass or say nothing, and every way the measuring itself
 * can go wrong (all errors: the measurement could not be taken).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONDITION_PATTERN, type Web } from '../../../src/api/analysis.ts';
import { evaluate, judge, parseCondition, type Condition } from '../../../src/workers/app/rollout/analysis/condition.ts';
import { measureWeb, type WebDeps } from '../../../src/workers/app/rollout/analysis/web.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { allowEntries } from '../../../src/workers/egress/allowlist.ts';
import { checkHttp } from '../../../src/workers/egress/outbound.ts';

const cond = (text: string): Condition => {
  const c = parseCondition(text);
  if ('error' in c) throw new Error(c.error);
  return c;
};

describe('conditions', () => {
  const doc = { data: { rate: 0.02, ok: true, name: 'web', items: [{ n: '3' }] }, empty: null };

  it.each([
    ['$.data.rate < 0.05', true],
    ['$.data.rate >= 0.05', false],
    ['$.data.ok == true', true],
    ["$.data.name == 'web'", true],
    ['$.data.name != "web"', false],
    ['$.data.items[0].n > 2', true], // a numeric string compares as its number (Prometheus samples)
    ['$.data.items[0].n == 3', true],
    ['$.empty == null', true],
    ['$.data.missing < 1', undefined],
    ['$.data.items[5].n > 1', undefined],
    ['$.data.name > 1', undefined],
  ])('%s → %s', (text, holds) => {
    expect(evaluate(cond(text), doc).holds).toBe(holds);
  });

  it.each(['$.a < b', 'len($.a) > 1', '$.a <', '$..a == 1', 'x.a == 1', '$.a == 1 && $.b == 2', '$.a.constructor == 1e999x'])('refuses %s', (text) => {
    expect(parseCondition(text)).toHaveProperty('error');
    expect(new RegExp(CONDITION_PATTERN).test(text)).toBe(false);
  });

  it('the admission pattern accepts what the parser accepts', () => {
    for (const text of ['$.a.b[0] <= -1.5e3', "result == 'x y'", '$ != null', '  $.ok==true  ']) {
      expect(parseCondition(text)).not.toHaveProperty('error');
      expect(new RegExp(CONDITION_PATTERN).test(text)).toBe(true);
    }
  });

  it('does not walk into prototypes', () => {
    expect(evaluate(cond('$.constructor == 1'), {}).holds).toBeUndefined();
  });

  it('judges: success, failure, and neither', () => {
    const ok = cond('$.rate < 0.05');
    const bad = cond('$.rate > 0.1');
    expect(judge({ rate: 0.01 }, ok, bad).phase).toBe('Successful');
    expect(judge({ rate: 0.2 }, ok, bad)).toMatchObject({ phase: 'Failed', value: '0.2' });
    expect(judge({ rate: 0.07 }, ok, bad).phase).toBe('Inconclusive');
    expect(judge({ rate: 0.07 }, ok, undefined).phase).toBe('Failed');
    // Nothing at the path is no data (the check's onNoData judges it); a value that is not a number is inconclusive.
    expect(judge({}, ok, undefined).phase).toBe('NoData');
    expect(judge({}, ok, bad).phase).toBe('NoData');
    expect(judge({ rate: 'high' }, ok, undefined).phase).toBe('Inconclusive');
  });

  it('records a found number, boolean or null as itself, anything else only by its kind and size', () => {
    const secret = { token: 'AQAEAHh-metadata-token', list: ['a', 'b'], obj: { k: 'v' }, n: 3, ok: false };
    expect(judge(secret, cond("$.token == 'x'"), undefined)).toEqual({
      phase: 'Failed',
      value: 'a string of 22 characters',
      message: "$.token == 'x' does not hold (a string of 22 characters)",
    });
    expect(judge(secret, cond('$.list == 1'), undefined).value).toBe('an array of 2 items');
    expect(judge(secret, cond('$.obj == 1'), cond('$.token != 1')).message).toBe('$.token != 1 holds (a string of 22 characters)');
    expect(judge(secret, cond('$.obj < 1'), undefined).message).toBe('$.obj < 1: the answer has an object there');
    expect(judge(secret, cond('$.n > 5'), undefined).value).toBe('3');
    expect(judge(secret, cond('$.ok == true'), undefined).value).toBe('false');
    expect(JSON.stringify(judge(secret, cond('$.token == 1'), cond('$.token != 1')))).not.toContain('metadata-token');
  });
});

describe('measureWeb against a local HTTP server', () => {
  let server: Server;
  let base = '';
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => resolve(text));
    });

  beforeAll(async () => {
    server = createServer((req, res) => {
      void body(req).then((text) => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body: text });
        if (req.url === '/slow') return setTimeout(() => res.end('{}'), 3000);
        if (req.url === '/500') return res.writeHead(500).end('{"error":"x"}');
        if (req.url === '/html') return res.end('<html>');
        if (req.url === '/huge') return res.writeHead(200, { 'content-length': String(2 << 20) }).end();
        if (req.url === '/moved') return res.writeHead(301, { location: '/ok' }).end();
        if (req.headers.authorization !== undefined && req.headers.authorization !== 'Bearer s3cret') return res.writeHead(403).end('{}');
        const rate = req.url === '/bad' ? 0.3 : 0.01;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: { errorRate: rate, query: text || undefined } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const secrets = new Map([['ns/token/value', 's3cret']]);
  const deps: WebDeps = {
    secretValue: (ns, name, key) => Promise.resolve(secrets.get(`${ns}/${name}/${key}`)),
    http: checkHttp({ allowedHosts: allowEntries(['*/127.0.0.1']), networks: 'local' }),
    signal: new AbortController().signal,
  };
  const now = () => new Date('2026-01-01T00:00:00Z');
  const web = (path: string, extra: Partial<Web> = {}): Web => ({ url: `${base}${path}`, successCondition: '$.data.errorRate < 0.05', ...extra });

  it('passes and fails on the answer', async () => {
    expect(await measureWeb(web('/ok'), 'ns', deps, now)).toMatchObject({ phase: 'Successful', value: '0.01' });
    expect(await measureWeb(web('/bad'), 'ns', deps, now)).toMatchObject({
      phase: 'Failed',
      value: '0.3',
      message: '$.data.errorRate < 0.05 does not hold (0.3)',
    });
  });

  it('POSTs a body with a header from a Secret of the App namespace', async () => {
    const auth = { name: 'Authorization', valueFrom: { secretKeyRef: { name: 'token', key: 'value' } } };
    const m = await measureWeb(
      web('/q', { method: 'POST', body: '{"q":1}', headers: [{ ...auth }], successCondition: '$.data.query == \'{"q":1}\'' }),
      'ns',
      { ...deps, secretValue: (ns, name, key) => Promise.resolve(ns === 'ns' ? `Bearer ${secrets.get(`${ns}/${name}/${key}`) ?? ''}` : undefined) },
      now,
    );
    expect(m.phase).toBe('Successful');
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/q', auth: 'Bearer s3cret', body: '{"q":1}' });
    // Another namespace's App finds no such Secret: an error, and nothing is sent.
    const before = seen.length;
    const other = await measureWeb(web('/q', { headers: [auth] }), 'other', deps, now);
    expect(other).toMatchObject({ phase: 'Error', message: 'header Authorization: Secret other/token has no key value' });
    expect(seen.length).toBe(before);
  });

  it('is an error when the measuring fails', async () => {
    expect((await measureWeb(web('/500'), 'ns', deps, now)).message).toContain('HTTP 500');
    expect((await measureWeb(web('/html'), 'ns', deps, now)).message).toContain('not JSON');
    expect((await measureWeb(web('/500'), 'ns', deps, now)).phase).toBe('Error');
    expect((await measureWeb(web('/slow', { timeoutSeconds: 1 }), 'ns', deps, now)).phase).toBe('Error');
    expect((await measureWeb({ url: 'http://127.0.0.1:1/x', successCondition: '$.a == 1' }, 'ns', deps, now)).phase).toBe('Error');
    const refused = await measureWeb(
      web('/ok', { headers: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'a', key: 'b' } } }] }),
      'ns',
      { ...deps, secretValue: () => Promise.reject(new KubeError('Forbidden', 403, 'secrets "a" is forbidden')) },
      now,
    );
    expect(refused.message).toBe('header X: Secret ns/a could not be read (Forbidden)');
  });

  it('is an error when the request is refused or the answer too large, saying why', async () => {
    expect(await measureWeb(web('/huge'), 'ns', deps, now)).toMatchObject({
      phase: 'Error',
      message: `GET ${base}/huge: the answer is too large (Content-Length over 1048576 bytes)`,
    });
    expect(await measureWeb(web('/moved'), 'ns', deps, now)).toMatchObject({
      phase: 'Error',
      message: `GET ${base}/moved: HTTP 301: redirects are not followed`,
    });
    const before = seen.length;
    const metadata = await measureWeb(web('/ok', { headers: [{ name: 'Metadata-Flavor', value: 'Google' }] }), 'ns', deps, now);
    expect(metadata).toMatchObject({ phase: 'Error', message: `GET ${base}/ok: header Metadata-Flavor may not be sent` });
    const elsewhere = await measureWeb(
      web('/ok'),
      'team-b',
      { ...deps, http: checkHttp({ allowedHosts: allowEntries(['team-a/127.0.0.1']), networks: 'local' }) },
      now,
    );
    expect(elsewhere.message).toContain('is not an allowed check host for namespace team-b (the worker setting EBB_CHECK_ALLOWED_HOSTS lists them)');
    expect(seen.length).toBe(before);
  });
});
