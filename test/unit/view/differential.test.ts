/**
 * The differential property of the view (pure, seeded): over generated histories of an App and its pods (ebb's
 * creates, deletes and patches, the kubelet's status updates, a person's edits) in which the watcher applies
 * events late by varying amounts and ebb's records of its own writes land before or after the watcher saw them,
 * a reconcile that the freshness rule lets read the view plans exactly what it plans on a fresh read of the
 * cluster as of the events the view applied, and the view it reads has seen every write of ebb's recorded by
 * then. Otherwise the rule says wait or read fresh.
 */
import { describe, expect, it } from 'vitest';
import type { App } from '../../../src/api/app.ts';
import type { ControllerRevision, KubeObject, Pod, Stored } from '../../../src/kube/types.ts';
import { deleteChanges, upsertChanges, type Change } from '../../../src/view/changes.ts';
import { judge, type RawView } from '../../../src/view/freshness.ts';
import { Field } from '../../../src/view/keys.ts';
import { needsInput, plan, type Observed, type PlanResult } from '../../../src/workers/app/planner.ts';
import { selectorMatches } from '../../../src/workers/app/pods/selector.ts';
import { newRevision, revisionData } from '../../../src/workers/app/revisions/revisions.ts';
import { makeApp, NS, podFor, stored } from '../app/fixtures.ts';

const NOW = new Date('2026-01-01T00:10:00Z');
const NOW_MS = NOW.getTime();
const LIST = 'L1';

/** mulberry32: a small seeded generator, so a failing history is replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const template = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });

interface Event {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  kind: 'app' | 'pod';
  object: KubeObject;
  /** ebb's write: the record a worker sets next to the view after the apiserver answered. */
  record?: [string, string];
}

/** What no plan reads: the view drops it, a fresh read has it. */
function noisy<T extends KubeObject>(obj: T, rv: number): T {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv), managedFields: [{ manager: 'kubelet', time: `t${rv}` }] } };
}

class World {
  rv = 100;
  app: Stored<App>;
  pods = new Map<string, Stored<Pod>>();
  revisions: Stored<ControllerRevision>[];

  constructor(r: () => number) {
    const policy = r() < 0.5 ? 'OrderedReady' : 'Parallel';
    const base = makeApp('web', { replicas: 1 + Math.floor(r() * 3), podManagementPolicy: policy, template: template('v1') });
    const revs = ['v1', 'v2'].map((tag, i) => {
      const a = makeApp('web', { ...base.spec, template: template(tag) });
      return stored<ControllerRevision>(newRevision(a, revisionData(a), i + 1, 0), `rev-${tag}`);
    });
    this.revisions = revs;
    this.app = noisy({ ...base, status: { currentRevision: revs[0]?.metadata.name, updateRevision: revs[0]?.metadata.name } }, this.rv);
  }

  private next(): number {
    return ++this.rv;
  }

  private updateRevision(): string {
    return this.app.status?.updateRevision ?? '';
  }

  /** One step of the history, or undefined when the chosen step does not apply now. */
  step(r: () => number): Event | undefined {
    const pods = [...this.pods.values()];
    const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(r() * xs.length)];
    const choice = Math.floor(r() * 9);
    switch (choice) {
      case 0: {
        const ordinal = Math.floor(r() * 4);
        if (this.pods.has(`web-${ordinal}`)) return undefined;
        const pod = noisy(podFor(this.app, ordinal, this.updateRevision(), 'pending'), this.next());
        pod.metadata.uid = `uid-${ordinal}-${this.rv}`;
        pod.spec = { ...pod.spec, affinity: { nodeAffinity: {} } } as Pod['spec'];
        this.pods.set(pod.metadata.name, pod);
        return { type: 'ADDED', kind: 'pod', object: pod, record: [Field.wrotePod(pod.metadata.name), pod.metadata.resourceVersion] };
      }
      case 1:
      case 2: {
        const pod = pick(pods.filter((p) => !p.metadata.deletionTimestamp));
        if (!pod) return undefined;
        const ready = pod.status?.conditions?.[0]?.status !== 'True';
        const next = noisy({ ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: `2026-01-01T00:0${this.rv % 10}:00Z` }] } }, this.next());
        this.pods.set(pod.metadata.name, next);
        return { type: 'MODIFIED', kind: 'pod', object: next };
      }
      case 3: {
        const pod = pick(pods.filter((p) => !p.metadata.deletionTimestamp));
        if (!pod) return undefined;
        const next = noisy({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:05:00Z' } }, this.next());
        this.pods.set(pod.metadata.name, next);
        return { type: 'MODIFIED', kind: 'pod', object: next, record: [Field.deletedPod(pod.metadata.name), pod.metadata.uid] };
      }
      case 4: {
        const pod = pick(pods.filter((p) => p.metadata.deletionTimestamp));
        if (!pod) return undefined;
        this.pods.delete(pod.metadata.name);
        return { type: 'DELETED', kind: 'pod', object: noisy(pod, this.next()) };
      }
      case 5: {
        const pod = pick(pods);
        if (!pod) return undefined;
        const next = noisy({ ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, touched: String(this.rv) } } }, this.next());
        this.pods.set(pod.metadata.name, next);
        return { type: 'MODIFIED', kind: 'pod', object: next, record: [Field.wrotePod(pod.metadata.name), next.metadata.resourceVersion] };
      }
      case 6: {
        const tag = r() < 0.5 ? 'v1' : 'v2';
        const spec = { ...this.app.spec, replicas: 1 + Math.floor(r() * 4), template: template(tag) };
        const status = { ...this.app.status, updateRevision: `rev-${tag}` };
        this.app = noisy({ ...this.app, spec, status, metadata: { ...this.app.metadata, generation: (this.app.metadata.generation ?? 1) + 1 } }, this.next());
        return { type: 'MODIFIED', kind: 'app', object: this.app };
      }
      case 7: {
        const status = { ...this.app.status, observedGeneration: this.app.metadata.generation, replicas: this.pods.size };
        this.app = noisy({ ...this.app, status }, this.next());
        return { type: 'MODIFIED', kind: 'app', object: this.app, record: [Field.wroteApp, this.app.metadata.resourceVersion] };
      }
      default: {
        const pod = pick(pods);
        if (!pod) return undefined;
        // The kubelet's bookkeeping: a new resourceVersion, nothing a plan reads.
        const next = noisy(pod, this.next());
        this.pods.set(pod.metadata.name, next);
        return { type: 'MODIFIED', kind: 'pod', object: next };
      }
    }
  }

  /** A fresh read: the App and the pods its selector selects, in full. */
  observed(): Observed {
    const pods = [...this.pods.values()].filter((p) => selectorMatches(this.app.spec.selector, p.metadata.labels));
    return { app: this.app, pods: byName(pods), revisions: this.revisions, claims: [] };
  }
}

const byName = (pods: Stored<Pod>[]): Stored<Pod>[] => [...pods].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));

/** A plan as data: its status-as-read computed (it is a thunk, computed on a failure path). */
function comparable(result: PlanResult): unknown {
  if (needsInput(result)) return result;
  const { statusAsRead, ...rest } = result;
  return { ...rest, statusAsRead: statusAsRead?.() };
}

function apply(hash: Map<string, string>, changes: Change[]): void {
  for (const c of changes) hash.set(c.field, c.value);
}

function changesOf(ev: Event): Change[] {
  return ev.type === 'DELETED' ? deleteChanges(ev.kind, ev.object, LIST) : upsertChanges(ev.kind, ev.object, LIST);
}

/** A history, its timings, and what the rule says at a read time; the property checked on it. */
function trial(seed: number): 'use' | 'wait' | 'fresh' {
  const r = rng(seed);
  const world = new World(r);
  const hash = new Map<string, string>();
  apply(hash, upsertChanges('app', world.app, LIST));
  hash.set(Field.checked, `${NOW_MS} 0`);
  // Snapshots of the world after each event: a fresh read as of the events the view applied.
  const states: Observed[] = [world.observed()];
  const events: Event[] = [];
  const length = 5 + Math.floor(r() * 25);
  while (events.length < length) {
    const ev = world.step(r);
    if (!ev) continue;
    events.push(ev);
    states.push(world.observed());
  }
  // Event i happens at time i; the watcher applies it at applied[i] (in order, late by 0 to 6); ebb records its
  // write at recordAt[i] (before or after the watcher saw it). The reconcile reads at time T.
  const lags = [0, 0, 0, 0.5, 1, 2, 6];
  const applied: number[] = [];
  for (const [i] of events.entries()) applied.push(Math.max(applied[i - 1] ?? 0, i + (lags[Math.floor(r() * lags.length)] ?? 0)));
  // One worker reconciles an App at a time, and records its writes in the order it made them.
  const recordAt: number[] = [];
  for (const [i] of events.entries()) recordAt.push(Math.max(recordAt[i - 1] ?? 0, i + [0.25, 0.25, 1.25, 3.25][Math.floor(r() * 4)]!));
  const T = 1 + Math.floor(r() * (events.length + 4)) + 0.5;
  const ops: [number, () => void][] = [];
  for (const [i, ev] of events.entries()) {
    if (i >= T) break;
    ops.push([applied[i]!, () => apply(hash, changesOf(ev))]);
    const rec = ev.record;
    if (rec) ops.push([recordAt[i]!, () => hash.set(rec[0], rec[1])]);
  }
  for (const [, op] of ops.filter(([at]) => at < T).sort(([a], [b]) => a - b)) op();
  const raw: RawView = { fields: Object.fromEntries(hash), lists: { apps: LIST, pods: LIST } };
  const verdict = judge(raw, NS, NOW_MS, 60_000);
  if (!verdict.use) return verdict.why;
  const seen = events.filter((_, i) => i < T && applied[i]! < T).length;
  // The view reads as a fresh read at the moment it reflects: the planner plans the same.
  const onView: Observed = { app: verdict.app, pods: byName(verdict.pods.filter((p) => selectorMatches(verdict.app.spec.selector, p.metadata.labels))), revisions: world.revisions, claims: [] };
  expect(comparable(plan(onView, NOW)), `seed ${seed}`).toEqual(comparable(plan(states[seen]!, NOW)));
  // Every write of ebb's recorded by T was seen.
  for (const [i, ev] of events.entries()) if (ev.record && i < T && recordAt[i]! < T) expect(i < seen, `seed ${seed}: write ${i} recorded, not seen`).toBe(true);
  return 'use';
}

describe('the view: differential property', () => {
  it('plans on the view what it plans on a fresh read, or waits / reads fresh (2,000 seeded histories)', () => {
    const outcomes = { use: 0, wait: 0, fresh: 0 };
    for (let seed = 1; seed <= 2000; seed++) outcomes[trial(seed)]++;
    // The histories reach both sides of the rule.
    expect(outcomes.use).toBeGreaterThan(200);
    expect(outcomes.wait).toBeGreaterThan(200);
  });
});
