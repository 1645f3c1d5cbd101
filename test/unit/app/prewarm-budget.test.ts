/**
 * The pre-warm pull budget's Redis script on a real redis-server: the limit holds across holders settling at
 * once, finished pulls give their share back, running ones keep theirs, and leases of a vanished holder expire.
 */
import { describe, expect, it } from 'vitest';
import { budgetKey, LEASE_MS, pullsInProgress, redisPullBudget } from '../../../src/workers/app/prewarm/budget.ts';
import { useRedis } from '../queue/support.ts';

const redis = useRedis();

const nodes = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('redisPullBudget', () => {
  it('grants in order while there is room, and keeps a holder’s grants on asking again', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    const budget = redisPullBudget(client, prefix, 3);
    expect(await budget.settle('ns/a', { pulling: [], done: [], want: ['n1', 'n2'] })).toEqual(['n1', 'n2']);
    expect(await budget.settle('ns/b', { pulling: [], done: [], want: ['n1', 'n2'] })).toEqual(['n1']);
    // Asking again for what it holds (a write that failed, a retried reconcile) costs nothing more.
    expect(await budget.settle('ns/a', { pulling: [], done: [], want: ['n2', 'n3'] })).toEqual(['n2']);
    expect(await pullsInProgress(client, prefix)).toBe(3);
  });

  it('finished pulls give their share back; running ones are counted even above the limit', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    const budget = redisPullBudget(client, prefix, 2);
    await budget.settle('ns/a', { pulling: [], done: [], want: ['n1', 'n2'] });
    expect(await budget.settle('ns/b', { pulling: [], done: [], want: ['n1'] })).toEqual([]);
    expect(await budget.settle('ns/a', { pulling: ['n2'], done: ['n1'], want: [] })).toEqual([]);
    expect(await budget.settle('ns/b', { pulling: [], done: [], want: ['n1', 'n3'] })).toEqual(['n1']);
    // After Redis lost the count, a holder's running pulls come back whatever the limit.
    await client.del(budgetKey(prefix));
    await budget.settle('ns/c', { pulling: [], done: [], want: ['x1', 'x2'] });
    await budget.settle('ns/a', { pulling: ['n2'], done: [], want: [] });
    expect(await pullsInProgress(client, prefix)).toBe(3);
    expect(await budget.settle('ns/b', { pulling: [], done: [], want: ['n4'] })).toEqual([]);
  });

  it('leases of a holder that never comes back expire', async () => {
    const client = redis.connection(false);
    const { prefix } = redis.config();
    let now = 1_000_000;
    const budget = redisPullBudget(client, prefix, 1, () => now);
    expect(await budget.settle('ns/gone', { pulling: [], done: [], want: ['n1'] })).toEqual(['n1']);
    now += LEASE_MS - 1;
    expect(await budget.settle('ns/b', { pulling: [], done: [], want: ['n1'] })).toEqual([]);
    now += 2;
    expect(await budget.settle('ns/b', { pulling: [], done: [], want: ['n1'] })).toEqual(['n1']);
  });

  it('many holders settling at once never get more than the limit between them', async () => {
    const { prefix } = redis.config();
    const clients = [redis.connection(false), redis.connection(false), redis.connection(false)];
    const holders = nodes('ns/app-', 60);
    const granted = await Promise.all(
      holders.map((h, i) =>
        redisPullBudget(clients[i % clients.length] ?? clients[0]!, prefix, 7).settle(h, { pulling: [], done: [], want: nodes('node-', 5) }),
      ),
    );
    expect(granted.flat()).toHaveLength(7);
    expect(await pullsInProgress(clients[0]!, prefix)).toBe(7);
  });
});
