/**
 * `rediss://` with EBB_REDIS_CA_FILE against a real redis-server serving TLS with a certificate of a private
 * CA: ebb's connection verifies the server with that CA and works (BullMQ included); without the CA setting
 * the same server is refused, since its certificate chains to no CA the system trusts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../harness/sandbox/ports.ts';
import { startChild, type Child } from '../../../harness/sandbox/process.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection, type RedisClient } from '../../../src/queue/connection.ts';
import { enqueue } from '../../../src/queue/enqueue.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';

const openssl = (dir: string, ...args: string[]): Promise<unknown> => promisify(execFile)('openssl', args, { cwd: dir });

describe('Redis over TLS', () => {
  let dir = '';
  let port = 0;
  let server: Child | undefined;
  const clients: RedisClient[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ebb-redis-tls-'));
    // A CA of this test's own, and a server certificate it signs for localhost.
    await openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=ebb-test-ca', '-days', '1');
    await openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    await writeFile(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost\n');
    await openssl(
      dir,
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '1',
      '-extfile',
      'san.ext',
    );
    port = await freePort();
    const args = ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no'];
    const files = ['--tls-cert-file', join(dir, 'server.pem'), '--tls-key-file', join(dir, 'server.key'), '--dir', dir];
    server = startChild('redis-tls', 'redis-server', [...args, ...files], join(dir, 'redis.log'));
    // openssl makes two RSA keys here: a second on a quiet machine, far more on a loaded one.
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await server?.stop(5_000);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('verifies the server with EBB_REDIS_CA_FILE', async () => {
    const cfg = parseQueueConfig({ EBB_REDIS_URL: `rediss://localhost:${port}`, EBB_REDIS_CA_FILE: join(dir, 'ca.pem'), EBB_QUEUE_PREFIX: '{tls}' });
    const client = redisConnection(cfg.redis, { forWorker: false, name: 'tls-test' });
    clients.push(client);
    await waitFor(async () => ((await client.ping().catch(() => undefined)) === 'PONG' ? true : undefined), { timeoutMs: 10_000, what: 'PONG over TLS' });
    const queue = createReconcileQueue(client, cfg);
    try {
      await enqueue(queue, { kind: 'App', namespace: 'ns', name: 'web' });
      expect(await queue.getWaitingCount()).toBe(1);
    } finally {
      await queue.close();
    }
  });

  it('refuses the same server without the CA', async () => {
    const client = redisConnection(`rediss://localhost:${port}`, { forWorker: false, name: 'tls-no-ca' });
    clients.push(client);
    // The first error that is about the certificate (not a connection the server was not yet taking).
    const refused = await new Promise<Error>((resolve) => client.on('error', (err: Error) => !/ECONNREFUSED/.test(err.message) && resolve(err)));
    expect(refused.message).toMatch(
      /unable to verify the first certificate|self[- ]signed certificate in certificate chain|unable to get local issuer certificate/,
    );
    expect(client.status).not.toBe('ready');
  });
});
