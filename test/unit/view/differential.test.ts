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
import { plan } from '../../../src/workers/app/planner.ts';
import { needsInput, type Observed, type PlanResult } from '../../../src/workers/app/model/plan.ts';
import { selectorMatches } from '../../../src/workers/app/pods/selector.ts';
import { newRevision, revisionData } from '../../../src/workers/app/revisions/revisions.ts';
import { makeApp, NS, podFor, stored } from '../app/fixtures.ts';
import { seededRandom } from '../../../harness/seeded-random.ts';

const NOW = new Date('2026-01-01T00:10:00Z');
const NOW_MS = NOW.getTime();
const LIST = 'L1';

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
    const steps = [this.create, this.readiness, this.readiness, this.remove, this.gone, this.annotate, this.edit, this.writeStatus, this.bookkeeping];
    return steps[Math.floor(r() * steps.length)]?.call(this, r);
  }

  private pick<T>(r: () => number, xs: T[]): T | undefined {
    return xs[Math.floor(r() * xs.length)];
  }

  private live(): Stored<Pod>[] {
    return [...this.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  }

  private create(r: () => number): Event | undefined {
    const ordinal = Math.floor(r() * 4);
    if (this.pods.has(`web-${ordinal}`)) return undefined;
    const pod = noisy(podFor(this.app, ordinal, this.updateRevision(), 'pending'), this.next());
    pod.metadata.uid = `uid-${ordinal}-${this.rv}`;
    pod.spec = { ...pod.spec, affinity: { nodeAffinity: {} } };
    this.pods.set(pod.metadata.name, pod);
    return { type: 'ADDED', kind: 'pod', object: pod, record: [Field.wrotePod(pod.metadata.name), pod.metadata.resourceVersion] };
  }

  private readiness(r: () => number): Event | undefined {
    const pod = this.pick(r, this.live());
    if (!pod) return undefined;
    const ready = pod.status?.conditions?.[0]?.status !== 'True';
    const status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: `2026-01-01T00:0${this.rv % 10}:00Z` }],
    };
    const next = noisy({ ...pod, status }, this.next());
    this.pods.set(pod.metadata.name, next);
    return { type: 'MODIFIED', kind: 'pod', object: next };
  }

  private remove(r: () => number): Event | undefined {
    const pod = this.pick(r, this.live());
    if (!pod) return undefined;
    const next = noisy({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:05:00Z' } }, this.next());
    this.pods.set(pod.metadata.name, next);
    return { type: 'MODIFIED', kind: 'pod', object: next, record: [Field.deletedPod(pod.metadata.name), pod.metadata.uid] };
  }

  private gone(r: () => number): Event | undefined {
    const pod = this.pick(
      r,
      [...this.pods.values()].filter((p) => p.metadata.deletionTimestamp),
    );
    if (!pod) return undefined;
    this.pods.delete(pod.metadata.name);
    return { type: 'DELETED', kind: 'pod', object: noisy(pod, this.next()) };
  }

  private annotate(r: () => number): Event | undefined {
    const pod = this.pick(r, [...this.pods.values()]);
    if (!pod) return undefined;
    const next = noisy({ ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, touched: String(this.rv) } } }, this.next());
    this.pods.set(pod.metadata.name, next);
    return { type: 'MODIFIED', kind: 'pod', object: next, record: [Field.wrotePod(pod.metadata.name), next.metadata.resourceVersion] };
  }

  private edit(r: () => number): Event {
    const tag = r() < 0.5 ? 'v1' : 'v2';
    const spec = { ...this.app.spec, replicas: 1 + Math.floor(r() * 4), template: template(tag) };
    const status = { ...this.app.status, updateRevision: `rev-${tag}` };
    this.app = noisy({ ...this.app, spec, status, metadata: { ...this.app.metadata, generation: (this.app.metadata.generation ?? 1) + 1 } }, this.next());
    return { type: 'MODIFIED', kind: 'app', object: this.app };
  }

  private writeStatus(): Event {
    const status = { ...this.app.status, observedGeneration: this.app.metadata.generation, replicas: this.pods.size };
    this.app = noisy({ ...this.app, status }, this.next());
    return { type: 'MODIFIED', kind: 'app', object: this.app, record: [Field.wroteApp, this.app.metadata.resourceVersion] };
  }

  /** The kubelet's bookkeeping: a new resourceVersion, nothing a plan reads. */
  private bookkeeping(r: () => number): Event | undefined {
    const pod = this.pick(r, [...this.pods.values()]);
    if (!pod) return undefined;
    const next = noisy(pod, this.next());
    this.pods.set(pod.metadata.name, next);
    return { type: 'MODIFIED', kind: 'pod', object: next };
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

interface History {
  world: World;
  events: Event[];
  /** The world as a fresh read returns it after each event (`states[k]`: after the first k). */
  states: Observed[];
  /** When the watcher applies each event (in order, late by 0 to 6). */
  applied: number[];
  /** When ebb records each of its writes, in the order it made them (one worker reconciles an App at a time). */
  recordAt: number[];
}

function history(r: () => number): History {
  const world = new World(r);
  const states: Observed[] = [world.observed()];
  const events: Event[] = [];
  const length = 5 + Math.floor(r() * 25);
  while (events.length < length) {
    const ev = world.step(r);
    if (!ev) continue;
    events.push(ev);
    states.push(world.observed());
  }
  const lags = [0, 0, 0, 0.5, 1, 2, 6];
  const applied: number[] = [];
  const recordAt: number[] = [];
  for (const [i] of events.entries()) {
    applied.push(Math.max(applied[i - 1] ?? 0, i + (lags[Math.floor(r() * lags.length)] ?? 0)));
    recordAt.push(Math.max(recordAt[i - 1] ?? 0, i + ([0.25, 0.25, 1.25, 3.25][Math.floor(r() * 4)] ?? 0)));
  }
  return { world, events, states, applied, recordAt };
}

/** The App's hash at time T: the initial list, then the events applied and the records written by T, in time order. */
function viewAt(h: History, T: number): RawView {
  const hash = new Map<string, string>();
  apply(hash, upsertChanges('app', h.states[0]?.app ?? h.world.app, LIST));
  hash.set(Field.checked, `${NOW_MS} 0`);
  const ops: [number, () => void][] = [];
  for (const [i, ev] of h.events.entries()) {
    if (i >= T) break;
    ops.push([h.applied[i] ?? 0, () => apply(hash, changesOf(ev))]);
    const rec = ev.record;
    if (rec) ops.push([h.recordAt[i] ?? 0, () => hash.set(rec[0], rec[1])]);
  }
  for (const [, op] of ops.filter(([at]) => at < T).sort(([a], [b]) => a - b)) op();
  return { fields: Object.fromEntries(hash), lists: { apps: LIST, pods: LIST } };
}

/** A history, a read at time T, what the rule says, and the property checked on it. */
function trial(seed: number): 'use' | 'wait' | 'fresh' {
  const r = seededRandom(seed);
  const h = history(r);
  const T = 1 + Math.floor(r() * (h.events.length + 4)) + 0.5;
  const verdict = judge(viewAt(h, T), NS, NOW_MS, 60_000);
  if (!verdict.use) return verdict.why;
  const seen = h.events.filter((_, i) => i < T && (h.applied[i] ?? 0) < T).length;
  // The view reads as a fresh read at the moment it reflects: the planner plans the same.
  const pods = byName(verdict.pods.filter((p) => selectorMatches(verdict.app.spec.selector, p.metadata.labels)));
  const onView: Observed = { app: verdict.app, pods, revisions: h.world.revisions, claims: [] };
  const fresh = h.states[seen];
  expect(fresh).toBeDefined();
  if (fresh) expect(comparable(plan(onView, NOW)), `seed ${seed}`).toEqual(comparable(plan(fresh, NOW)));
  // Every write of ebb's recorded by T was seen.
  const unseen = h.events.filter((ev, i) => ev.record && i < T && (h.recordAt[i] ?? 0) < T && i >= seen);
  expect(unseen, `seed ${seed}: writes recorded, not seen`).toEqual([]);
  return 'use';
}

describe('the view: differential property', () => {
  it('plans on the view what it plans on a fresh read, or waits / reads fresh (1,000 seeded histories)', { timeout: 120_000 }, () => {
    const outcomes = { use: 0, wait: 0, fresh: 0 };
    for (let seed = 1; seed <= 1000; seed++) outcomes[trial(seed)]++;
    // The histories reach both sides of the rule.
    expect(outcomes.use).toBeGreaterThan(100);
    expect(outcomes.wait).toBeGreaterThan(100);
  });
});
