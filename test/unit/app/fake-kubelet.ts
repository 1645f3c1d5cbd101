/**
 * An in-memory kubelet for scenario tests: pods become Running and Ready `startTicks` ticks after creation,
 * terminating pods disappear `terminateTicks` ticks after deletion. One tick advances the injected clock.
 */
import type { FakeCluster } from '../../../src/workers/app/fake-client.ts';

export class Clock {
  private t: number;
  constructor(start = Date.parse('2025-06-01T12:00:00Z')) {
    this.t = start;
  }
  now = (): Date => new Date(this.t);
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface KubeletOptions {
  startTicks: number;
  terminateTicks: number;
  tickMs: number;
}

export class FakeKubelet {
  private readonly age = new Map<string, number>();
  private readonly dying = new Map<string, number>();
  private readonly cluster: FakeCluster;
  private readonly clock: Clock;
  readonly opts: KubeletOptions;

  constructor(cluster: FakeCluster, clock: Clock, opts: Partial<KubeletOptions> = {}) {
    this.cluster = cluster;
    this.clock = clock;
    this.opts = { startTicks: 2, terminateTicks: 1, tickMs: 1000, ...opts };
  }

  tick(): void {
    this.clock.advance(this.opts.tickMs);
    const now = this.clock.now().toISOString();
    for (const pod of [...this.cluster.pods.values()]) {
      const uid = pod.metadata.uid ?? '';
      const ns = pod.metadata.namespace ?? '';
      const name = pod.metadata.name ?? '';
      if (pod.metadata.deletionTimestamp) {
        const d = (this.dying.get(uid) ?? 0) + 1;
        this.dying.set(uid, d);
        if (d >= this.opts.terminateTicks) this.cluster.removePod(ns, name);
        continue;
      }
      const a = (this.age.get(uid) ?? 0) + 1;
      this.age.set(uid, a);
      if (pod.status?.phase === 'Pending' && a >= this.opts.startTicks) {
        this.cluster.setPodStatus(ns, name, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] });
      }
    }
  }

  /** The pod's container exits for good (restartPolicy aside): phase Failed. */
  fail(ns: string, name: string): void {
    this.cluster.setPodStatus(ns, name, { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: this.clock.now().toISOString() }] });
  }
}
