/**
 * The pre-warm pull budget's Redis script on a real redis-server: the limit holds across holders settling at
 * once, finished pulls give their share back, running ones keep theirs, and leases of a vanished holder expire.
 */
import { describe, expect, it } from 'vitest';
import {
  budgetKey,
  ENTRIES_LEASE_MS,
  LEASE_MS,
  namespaceKeys,
  pullsInProgress,
  redisPullBudget,
  type PullBudget,
  type PullBudgetRequest,
} from '../../../src/workers/shared/pull-budget.ts';
import { useRedis } from '../queue/support.ts';

const redis = useRedis();

const settle = async (budget: PullBudget, holder: string, request: PullBudgetRequest): Promise<string[]> => (await budget.settle(holder, request)).granted;

const nodes = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('redisPullBudget', () => {
  it('grants in order while there is room, and keeps a holder’s grants on asking again', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    const budget = redisPullBudget(client, prefix, 3);
    expect(await settle(budget, 'ns/a', { pulling: [], done: [], want: ['n1', 'n2'] })).toEqual(['n1', 'n2']);
    expect(await settle(budget, 'ns/b', { pulling: [], done: [], want: ['n1', 'n2'] })).toEqual(['n1']);
    // Asking again for what it holds (a write that failed, a retried reconcile) costs nothing more.
    expect(await settle(budget, 'ns/a', { pulling: [], done: [], want: ['n2', 'n3'] })).toEqual(['n2']);
    expect(await pullsInProgress(client, prefix)).toBe(3);
  });

  it('finished pulls give their share back; running ones are counted even above the limit', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    const budget = redisPullBudget(client, prefix, 2);
    await settle(budget, 'ns/a', { pulling: [], done: [], want: ['n1', 'n2'] });
    expect(await settle(budget, 'ns/b', { pulling: [], done: [], want: ['n1'] })).toEqual([]);
    expect(await settle(budget, 'ns/a', { pulling: ['n2'], done: ['n1'], want: [] })).toEqual([]);
    expect(await settle(budget, 'ns/b', { pulling: [], done: [], want: ['n1', 'n3'] })).toEqual(['n1']);
    // After Redis lost the count, a holder's running pulls come back whatever the limit.
    await client.del(budgetKey(prefix), ...namespaceKeys(prefix, 'ns'));
    await settle(budget, 'ns/c', { pulling: [], done: [], want: ['x1', 'x2'] });
    await settle(budget, 'ns/a', { pulling: ['n2'], done: [], want: [] });
    expect(await pullsInProgress(client, prefix)).toBe(3);
    expect(await settle(budget, 'ns/b', { pulling: [], done: [], want: ['n4'] })).toEqual([]);
  });

  it('leases of a holder that never comes back expire', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    let now = 1_000_000;
    const budget = redisPullBudget(client, prefix, 1, () => now);
    expect(await settle(budget, 'ns/gone', { pulling: [], done: [], want: ['n1'] })).toEqual(['n1']);
    now += LEASE_MS - 1;
    expect(await settle(budget, 'ns/b', { pulling: [], done: [], want: ['n1'] })).toEqual([]);
    now += 2;
    expect(await settle(budget, 'ns/b', { pulling: [], done: [], want: ['n1'] })).toEqual(['n1']);
  });

  it('many holders settling at once never get more than the limit between them', async () => {
    const { prefix } = redis.config();
    const clients = [redis.connection(false), redis.connection(false), redis.connection(false)];
    const holders = nodes('ns/app-', 60);
    const granted = await Promise.all(
      holders.map((h, i) =>
        settle(redisPullBudget(clients[i % clients.length] ?? clients[0]!, prefix, 7), h, { pulling: [], done: [], want: nodes('node-', 5) }),
      ),
    );
    expect(granted.flat()).toHaveLength(7);
    expect(await pullsInProgress(clients[0]!, prefix)).toBe(7);
  });

  it("bounds one namespace's pulls at once; another namespace still gets the room left", async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    const budget = redisPullBudget(client, prefix, 10, Date.now, { pulls: 2, entries: 1_000 });
    expect(await budget.settle('tenant-a/x', { pulling: [], done: [], want: ['n1', 'n2', 'n3'] })).toEqual({
      granted: ['n1', 'n2'],
      limitedBy: 'namespacePulls',
    });
    expect(await budget.settle('tenant-a/y', { pulling: [], done: [], want: ['n1'] })).toEqual({ granted: [], limitedBy: 'namespacePulls' });
    expect(await budget.settle('tenant-b/z', { pulling: [], done: [], want: ['n1', 'n2', 'n3'] })).toEqual({
      granted: ['n1', 'n2'],
      limitedBy: 'namespacePulls',
    });
    // A pull that ends gives the namespace's share back.
    await budget.settle('tenant-a/x', { pulling: ['n2'], done: ['n1'], want: [] });
    expect(await budget.settle('tenant-a/y', { pulling: [], done: [], want: ['n1'] })).toEqual({ granted: ['n1'] });
  });

  it('caps the ImageList entries one namespace holds: kept entries count and stay, new requests past the cap are refused, other namespaces are not', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    let now = 1_000_000;
    const budget = redisPullBudget(client, prefix, 100, () => now, { pulls: 100, entries: 10 });
    // 4 entries per node: one node kept, two wanted, room for one of them.
    expect(await budget.settle('tenant-a/x', { pulling: [], done: [], want: ['n2', 'n3'], kept: ['n1'], entriesPerNode: 4 })).toEqual({
      granted: ['n2'],
      limitedBy: 'namespaceEntries',
    });
    expect(await budget.settle('tenant-a/y', { pulling: [], done: [], want: ['n1'], entriesPerNode: 4 })).toEqual({
      granted: [],
      limitedBy: 'namespaceEntries',
    });
    expect(await budget.settle('tenant-b/z', { pulling: [], done: [], want: ['n1', 'n2'], entriesPerNode: 4 })).toEqual({ granted: ['n1', 'n2'] });
    // x keeps what it holds even when asking again; y fits once x gives its nodes up.
    expect(await budget.settle('tenant-a/x', { pulling: [], done: [], want: [], kept: ['n1', 'n2'], entriesPerNode: 4 })).toEqual({ granted: [] });
    expect(await budget.settle('tenant-a/y', { pulling: [], done: [], want: ['n1'], entriesPerNode: 4 })).toEqual({
      granted: [],
      limitedBy: 'namespaceEntries',
    });
    await budget.settle('tenant-a/x', { pulling: [], done: ['n1', 'n2'], want: [], kept: ['n1'], entriesPerNode: 4 });
    expect(await budget.settle('tenant-a/y', { pulling: [], done: [], want: ['n1'], entriesPerNode: 4 })).toEqual({ granted: ['n1'] });
    // A holder that never settles again is forgotten after ENTRIES_LEASE_MS.
    now += ENTRIES_LEASE_MS + 1;
    expect(await budget.settle('tenant-a/w', { pulling: [], done: [], want: ['n1', 'n2'], entriesPerNode: 5 })).toEqual({ granted: ['n1', 'n2'] });
  });
});
