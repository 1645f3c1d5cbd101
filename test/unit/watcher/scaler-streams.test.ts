/**
 * The scaler's streams share one backlog read, are capped, and with mutual TLS only a client whose certificate
 * the configured CA signed is served (certificates made with openssl, as the sandbox makes its own).
 */
import { credentials, status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki, type Pki } from '../../../harness/sandbox/pki.ts';
import { createLogger } from '../../../src/common/log.ts';
import { startScaler } from '../../../src/watcher/scaler.ts';
import { readScalerTls } from '../../../src/watcher/scaler-settings.ts';
import { call, client, type ScalerClient } from './scaler-client.ts';

const log = createLogger('test', 'silent');
const ref = { name: 'ebb-worker', namespace: 'ebb-system', scalerMetadata: {} };

/** Collects a stream's answers; `next(n)` resolves once n answers arrived. */
function follow(stream: ClientReadableStream<{ result: boolean }>): { seen: boolean[]; next(n: number): Promise<void>; error: Promise<ServiceError> } {
  const seen: boolean[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  stream.on('data', (m: { result: boolean }) => {
    seen.push(m.result);
    for (const w of waiters.filter((x) => seen.length >= x.n)) w.resolve();
  });
  const error = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
  return { seen, error, next: (n) => (seen.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))) };
}

describe('scaler streams', () => {
  it('serve every stream from one backlog read per announcement', async () => {
    let backlog = 0;
    let reads = 0;
    const probe = (): Promise<number> => {
      reads++;
      return Promise.resolve(backlog);
    };
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog: probe, log, recheckMs: 600_000, idleRecheckMs: 600_000 });
    const clients: ScalerClient[] = [0, 1, 2].map(() => client(scaler.port));
    const streams = clients.map((c) => c.StreamIsActive(ref));
    try {
      const followed = streams.map(follow);
      await Promise.all(followed.map((f) => f.next(1)));
      const before = reads;
      backlog = 4;
      scaler.notify();
      await Promise.all(followed.map((f) => f.next(2)));
      expect(followed.map((f) => f.seen)).toEqual([
        [false, true],
        [false, true],
        [false, true],
      ]);
      expect(reads - before, 'one read answered all three streams').toBe(1);
    } finally {
      for (const s of streams) s.cancel();
      for (const c of clients) c.close();
      await scaler.close();
    }
  });

  it('refuses a stream beyond the cap with RESOURCE_EXHAUSTED', async () => {
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog: () => Promise.resolve(0), log, maxStreams: 1 });
    const c = client(scaler.port);
    const first = c.StreamIsActive(ref);
    try {
      await follow(first).next(1);
      const refused = follow(c.StreamIsActive(ref));
      expect((await refused.error).code).toBe(status.RESOURCE_EXHAUSTED);
    } finally {
      first.cancel();
      c.close();
      await scaler.close();
    }
  });
});

describe('scaler with mutual TLS', () => {
  let dir = '';
  let pki: Pki;
  let stranger: Pki;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-scaler-tls-'));
    [pki, stranger] = await Promise.all([ensurePki(join(dir, 'ours')), ensurePki(join(dir, 'other'))]);
    // openssl makes two certificate authorities here: seconds on a quiet machine, far more on a loaded one.
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const tlsClient = async (port: number, id: { cert: string; key: string } | undefined, ca: string): Promise<ScalerClient> =>
    client(port, credentials.createSsl(await readFile(ca), id ? await readFile(id.key) : null, id ? await readFile(id.cert) : null));

  it('serves a client with a certificate of the configured CA, and no other', async () => {
    const tls = readScalerTls({ certFile: pki.serverCert, keyFile: pki.serverKey, clientCaFile: pki.caCert });
    const scaler = await startScaler({ address: '127.0.0.1', port: 0, backlog: () => Promise.resolve(2), log, tls });
    const good = await tlsClient(scaler.port, pki.clients.admin, pki.caCert);
    const anonymous = await tlsClient(scaler.port, undefined, pki.caCert);
    const foreign = await tlsClient(scaler.port, stranger.clients.admin, pki.caCert);
    const plaintext = client(scaler.port);
    try {
      expect(await call(good.IsActive, good, ref)).toEqual({ result: true });
      for (const c of [anonymous, foreign, plaintext]) {
        const err = await call(c.IsActive, c, ref).then(
          () => undefined,
          (e: unknown) => e as ServiceError,
        );
        expect(err?.code, 'refused').toBe(status.UNAVAILABLE);
      }
    } finally {
      for (const c of [good, anonymous, foreign, plaintext]) c.close();
      await scaler.close();
    }
  });

  it('names the setting of a file it cannot read', () => {
    expect(() => readScalerTls({ certFile: join(dir, 'missing.crt'), keyFile: pki.serverKey, clientCaFile: pki.caCert })).toThrow(
      /invalid configuration: EBB_SCALER_TLS_CERT_FILE: cannot read .*missing\.crt \(ENOENT\)/,
    );
  });
});
