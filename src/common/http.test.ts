import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { startOpsServer } from './http.ts';

describe('startOpsServer', () => {
  it('answers a failing handler with a bare 500: the error text stays out of the body', async () => {
    const ops = await startOpsServer({
      address: '127.0.0.1',
      port: 0,
      registry: new Registry(),
      healthz: () => undefined,
      readyz: () => {
        throw new Error('ECONNREFUSED redis://:hunter2@10.0.0.7:6379');
      },
      mounts: [{ prefix: '/board', handler: () => Promise.reject(new Error('NOPERM user ebb has no permissions')) }],
    });
    try {
      for (const path of ['/readyz', '/board/api/queues']) {
        const res = await fetch(`http://127.0.0.1:${ops.port}${path}`);
        expect(res.status).toBe(500);
        expect(await res.text()).toBe('internal error\n');
      }
      expect((await fetch(`http://127.0.0.1:${ops.port}/healthz`)).status).toBe(200);
    } finally {
      await ops.close();
    }
  });
});
