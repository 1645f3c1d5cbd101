/**
 * The worker's reads are bounded: `listAll` stops at the reconcile's byte budget with a TooLarge KubeError
 * (scripted apiserver), and a reconcile whose read ends so records a ReadTooLarge Warning Event on its App.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../api/app.ts';
import { byteBudget } from '../../kube/bounded-body.ts';
import { isKubeError, tooLarge } from '../../kube/errors.ts';
import type { KubeConfig } from '../../kube/kubeconfig.ts';
import { core } from '../../kube/paths.ts';
import { KubeRest } from '../../kube/rest.ts';
import type { Stored } from '../../kube/types.ts';
import type { EventSpec } from './model/actions.ts';
import type { AppClient } from './model/client.ts';
import { readObserved } from './read.ts';
import { listAll } from '../../kube/reads.ts';
import { RECONCILE_READ_BUDGET_BYTES } from './rest-client.ts';

let server: Server;
let requests = 0;

beforeAll(async () => {
  // 40 pods of about 100 KB each, paged by `limit` and `continue`.
  server = createServer((req, res) => {
    requests++;
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const from = Number(q.get('continue') ?? '0');
    const upto = Math.min(40, from + Number(q.get('limit')));
    const items = [];
    for (let i = from; i < upto; i++) items.push({ metadata: { name: `p-${i}`, annotations: { pad: 'a'.repeat(100_000) } } });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ metadata: { resourceVersion: '1', ...(upto < 40 ? { continue: String(upto) } : {}) }, items }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function rest(): KubeRest {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config: KubeConfig = { source: 'test', server: url, tls: {}, proxyUrl: undefined, credentials: () => Promise.resolve({ headers: {} }) };
  return new KubeRest(config);
}

describe('worker reads', () => {
  it('reads every page within the budget, and fails with TooLarge past it', async () => {
    const signal = AbortSignal.timeout(20_000);
    const all = await listAll(rest(), core('pods', 'ns'), undefined, signal, { pageSize: 10, budget: byteBudget(8 * 1024 * 1024) });
    expect(all).toHaveLength(40);
    requests = 0;
    const err: unknown = await listAll(rest(), core('pods', 'ns'), undefined, signal, { pageSize: 10, budget: byteBudget(2 * 1024 * 1024) }).catch(
      (e: unknown) => e,
    );
    expect(isKubeError(err, 'TooLarge') && err.budget).toBe(true);
    // A budget refusal is final: the page is not asked again with a smaller limit.
    expect(requests).toBe(3);
  });

  it('a read that passes the budget records ReadTooLarge on the App and fails', async () => {
    const app = { metadata: { name: 'greedy', namespace: 'ns', uid: 'u', generation: 1 }, spec: { selector: { matchLabels: { app: 'greedy' } } } };
    const recorded: EventSpec[] = [];
    const client = {
      apps: { get: () => Promise.resolve(app as unknown as Stored<App>) },
      pods: { list: () => Promise.reject(tooLarge('LIST pods', 1024, true)) },
      revisions: { list: () => Promise.resolve([]) },
      events: {
        record: (_app: unknown, ev: EventSpec) => {
          recorded.push(ev);
          return Promise.resolve();
        },
      },
    } as unknown as AppClient;
    const err: unknown = await readObserved(client, 'ns', 'greedy', { claims: 'lazy' }).catch((e: unknown) => e);
    expect(isKubeError(err, 'TooLarge')).toBe(true);
    expect(recorded).toMatchObject([{ type: 'Warning', reason: 'ReadTooLarge' }]);
    expect(recorded[0]?.message).toContain(`${RECONCILE_READ_BUDGET_BYTES} bytes`);
  });
});
