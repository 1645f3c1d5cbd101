import { describe, expect, it } from 'vitest';
import { between, restartOrder, seededRandom } from './faults.ts';

describe('restartOrder', () => {
  it('stops the apiserver before etcd and starts etcd before the apiserver', () => {
    expect(restartOrder(['kube-apiserver', 'etcd'])).toEqual({ stop: ['kube-apiserver', 'etcd'], start: ['etcd', 'kube-apiserver'] });
    expect(restartOrder(['etcd', 'kube-apiserver', 'etcd'])).toEqual({ stop: ['kube-apiserver', 'etcd'], start: ['etcd', 'kube-apiserver'] });
  });

  it('stops the scheduler first and starts it last, once the apiserver it talks to is back', () => {
    expect(restartOrder(['kube-scheduler', 'etcd', 'kube-apiserver'])).toEqual({
      stop: ['kube-scheduler', 'kube-apiserver', 'etcd'],
      start: ['etcd', 'kube-apiserver', 'kube-scheduler'],
    });
    expect(restartOrder(['etcd', 'kube-scheduler'])).toEqual({ stop: ['kube-scheduler', 'etcd'], start: ['etcd', 'kube-scheduler'] });
  });

  it('restarts only what is named', () => {
    expect(restartOrder(['etcd'])).toEqual({ stop: ['etcd'], start: ['etcd'] });
    expect(restartOrder(['kube-apiserver'])).toEqual({ stop: ['kube-apiserver'], start: ['kube-apiserver'] });
    expect(restartOrder([])).toEqual({ stop: [], start: [] });
  });
});

describe('seededRandom', () => {
  it('repeats its sequence for a seed and differs between seeds', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(first);
    const c = seededRandom(43);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(first);
  });

  it('stays in [0, 1) and spreads over it', () => {
    const r = seededRandom(7);
    const xs = Array.from({ length: 2000 }, () => r());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(xs.filter((x) => x < 0.5).length).toBeGreaterThan(900);
    expect(xs.filter((x) => x < 0.5).length).toBeLessThan(1100);
  });
});

describe('between', () => {
  it('covers both ends of the range and nothing outside it', () => {
    const r = seededRandom(1);
    const xs = new Set(Array.from({ length: 500 }, () => between(r, 3, 6)));
    expect([...xs].sort()).toEqual([3, 4, 5, 6]);
  });
});
