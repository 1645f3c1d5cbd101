import { describe, expect, it } from 'vitest';
import { KubeError } from './errors.ts';
import { core } from './paths.ts';
import type { KubeRest, ListResult } from './rest.ts';
import { listAll } from './reads.ts';

/** A LIST endpoint serving `pages`; `expireAt` pages in, the first continue token has expired (410). */
function pagedRest(pages: string[][], expireAt?: number): { rest: KubeRest; calls: (string | undefined)[] } {
  const calls: (string | undefined)[] = [];
  let expired = false;
  const list = (_ref: unknown, query: { continue?: string }): Promise<ListResult<string>> => {
    calls.push(query.continue);
    const i = query.continue === undefined ? 0 : Number(query.continue);
    if (expireAt !== undefined && i === expireAt && !expired) {
      expired = true;
      return Promise.reject(new KubeError('Gone', 410, 'list: the continue token has expired', 'Expired'));
    }
    const next = i + 1 < pages.length ? String(i + 1) : undefined;
    return Promise.resolve({ items: pages[i] ?? [], metadata: { resourceVersion: '1', ...(next ? { continue: next } : {}) } });
  };
  return { rest: { list } as unknown as KubeRest, calls };
}

describe('listAll', () => {
  it('follows continue tokens to the last page', async () => {
    const { rest, calls } = pagedRest([['a', 'b'], ['c', 'd'], ['e']]);
    expect(await listAll<string>(rest, core('pods', 'ns'), undefined, AbortSignal.timeout(1000), { pageSize: 2 })).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(calls).toEqual([undefined, '1', '2']);
  });

  it('starts again once when a continue token expired, without duplicates', async () => {
    const { rest, calls } = pagedRest([['a'], ['b'], ['c']], 2);
    expect(await listAll<string>(rest, core('pods', 'ns'), undefined, AbortSignal.timeout(1000), { pageSize: 1 })).toEqual(['a', 'b', 'c']);
    expect(calls).toEqual([undefined, '1', '2', undefined, '1', '2']);
  });
});
