import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../kube/types.ts';
import { formatKey } from '../queue/names.ts';
import { nodeSource } from './node-source.ts';
import { sourceSpecs } from './sources.ts';
import { observers, WarmPools } from './warm-pools.ts';

const app = (name: string, imagePrewarm?: object): KubeObject =>
  ({ metadata: { namespace: 'ns', name }, spec: imagePrewarm ? { imagePrewarm } : {} }) as KubeObject;
const node = (name: string, labels: Record<string, string>): KubeObject => ({ metadata: { name, labels } });
const k = (name: string) => formatKey({ kind: 'App', namespace: 'ns', name });
const names = (keys: { name: string }[]): string[] => keys.map((x) => x.name).sort();

function pools(): WarmPools {
  const p = new WarmPools();
  p.seen(k('web'), app('web', { enabled: true, nodeSelector: { pool: 'web' } }));
  p.seen(k('gpu'), app('gpu', { enabled: true, nodeSelector: { pool: 'gpu', zone: 'a' } }));
  p.seen(k('plain'), app('plain', { enabled: true }));
  p.seen(k('off'), app('off', { enabled: false, nodeSelector: { pool: 'web' } }));
  return p;
}

describe('WarmPools', () => {
  it('indexes only Apps with a pool in force', () => {
    const p = pools();
    expect(p.size).toBe(2);
    p.seen(k('web'), app('web', { enabled: true, nodeSelector: {} }));
    expect(p.size).toBe(1);
    p.gone(k('gpu'));
    expect(p.size).toBe(0);
  });

  it('a Node listed or added enqueues the pools it matches, once per label set', () => {
    const nodes = nodeSource(pools());
    const related = (n: KubeObject, type?: string) => nodes.relatedKeys?.(n, type) ?? [];
    expect(names(related(node('n1', { pool: 'web' })))).toEqual(['web']);
    expect(related(node('n1', { pool: 'web' }), 'MODIFIED'), 'a heartbeat: labels unchanged').toEqual([]);
    expect(names(related(node('n2', { pool: 'gpu', zone: 'a' }), 'ADDED'))).toEqual(['gpu']);
    expect(related(node('n3', { pool: 'gpu' }), 'ADDED'), 'a partial match').toEqual([]);
  });

  it('labels changed: every pool App (the node may have left one); deleted: the pools it matched', () => {
    const nodes = nodeSource(pools());
    const related = (n: KubeObject, type?: string) => nodes.relatedKeys?.(n, type) ?? [];
    related(node('n1', { pool: 'web' }), 'ADDED');
    expect(names(related(node('n1', { pool: 'none' }), 'MODIFIED'))).toEqual(['gpu', 'web']);
    expect(names(related(node('n1', { pool: 'web' }), 'DELETED'))).toEqual(['web']);
    expect(names(related(node('n1', { pool: 'web' }), 'MODIFIED')), 'seen again after its deletion: as new').toEqual(['web']);
  });

  it('a relist forgets pools of Apps gone', () => {
    const p = pools();
    p.retain((key) => key === k('web'));
    expect(p.size).toBe(1);
  });

  it('observers report to each', () => {
    const a = new WarmPools();
    const b = new WarmPools();
    const both = observers(a, undefined, b);
    both.seen(k('web'), app('web', { enabled: true, nodeSelector: { pool: 'web' } }));
    expect([a.size, b.size]).toEqual([1, 1]);
    both.retain(() => false);
    expect([a.size, b.size]).toEqual([0, 0]);
  });

  it('the watcher watches Nodes (no key of their own) and feeds App objects to the pools', () => {
    const p = new WarmPools();
    const specs = sourceSpecs([], undefined, undefined, p);
    const nodes = specs.find((s) => s.name === 'nodes');
    expect(nodes?.ref.resource).toBe('nodes');
    expect(nodes?.tracked).toBe(false);
    expect(nodes?.keyOf(node('n1', {}))).toBeUndefined();
    specs.find((s) => s.name === 'apps')?.states?.seen(k('web'), app('web', { enabled: true, nodeSelector: { pool: 'web' } }));
    expect(names(nodes?.relatedKeys?.(node('n1', { pool: 'web' }), 'ADDED') ?? [])).toEqual(['web']);
  });
});
