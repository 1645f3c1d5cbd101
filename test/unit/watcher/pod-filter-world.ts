/**
 * An App on the in-memory apiserver, its pods changed by a generated sequence of what kubelets, people, the
 * eviction API and finalizers do (`pod-changes.ts`) and by the App's own reconciles, with the watcher's pod
 * filter between the two: every pod write becomes the watch event the watcher would get, the filter decides
 * whether it reaches a reconcile, and a reconcile is the worker's real read → plan → execute. What the filter
 * drops never reaches the App, so its status is what the filtered events made of it; `unfilteredStatus()` is
 * the status a reconcile of the same pods computes.
 */
import { pino } from 'pino';
import type { AppStatus } from '../../../src/api/app-status.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Label } from '../../../src/api/keys.ts';
import type { KubeObject, Pod, Stored } from '../../../src/kube/types.ts';
import { AdmissionVerdicts } from '../../../src/workers/app/admission/dry-run.ts';
import { execute } from '../../../src/workers/app/executor.ts';
import { planLoop } from '../../../src/workers/app/plan-loop.ts';
import { Clock } from '../../../harness/fakes/clock.ts';
import { FakeCluster } from '../../../harness/fakes/cluster.ts';
import { makeApp, NS } from '../app/fixtures.ts';
import { podChange, POD_CHANGES, type PodChange } from './pod-changes.ts';

const silent = pino({ level: 'silent' });

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * The watcher's pod filter as the world drives it: `podEvent` for each pod watch event (true: enqueue the
 * App now), `appEvent` for each event of the App, `due` when the filter's short holds run out (the keys it
 * enqueues then).
 */
export interface PodFilter {
  podEvent(type: EventType, pod: KubeObject): boolean;
  appEvent(app: KubeObject): void;
  due(): number;
}

export const OPS = [...POD_CHANGES, 'scale', 'annotateApp'] as const;
export type Op = (typeof OPS)[number];

export class FilteredWorld {
  readonly clock = new Clock();
  readonly cluster = new FakeCluster(this.clock.now);
  readonly log: string[] = [];
  reconciles = 0;
  /** Pod events the filter enqueued at once / did not. */
  passed = 0;
  dropped = 0;
  private readonly filter: PodFilter;
  private readonly verdicts = new AdmissionVerdicts(() => this.clock.ms);
  /** The pods as the watcher last saw them. */
  private seen = new Map<string, Stored<Pod>>();
  private appVersion: string | undefined;
  private pending = false;
  private rv = 0;

  constructor(filter: PodFilter, spec: Partial<AppSpec>) {
    this.filter = filter;
    this.cluster.addApp(makeApp('web', spec));
    this.pending = true;
  }

  status(): AppStatus | undefined {
    return this.cluster.app(NS, 'web')?.status;
  }

  pods(): Stored<Pod>[] {
    return this.cluster.podsOf(NS).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  /** Delivers the pod watch events since the last call through the filter. */
  private deliverPods(): void {
    const now = new Map(this.pods().map((p) => [p.metadata.name, p]));
    const events: { type: EventType; pod: Stored<Pod> }[] = [];
    for (const [name, old] of this.seen) {
      const cur = now.get(name);
      if (!cur || cur.metadata.uid !== old.metadata.uid) events.push({ type: 'DELETED', pod: old });
    }
    for (const [name, cur] of now) {
      const old = this.seen.get(name);
      if (!old || old.metadata.uid !== cur.metadata.uid) events.push({ type: 'ADDED', pod: cur });
      else if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) events.push({ type: 'MODIFIED', pod: cur });
    }
    this.seen = now;
    for (const ev of events) {
      const pass = this.filter.podEvent(ev.type, ev.pod);
      if (pass) this.passed++;
      else this.dropped++;
      this.log.push(`  ${ev.type} ${ev.pod.metadata.name} ${pass ? 'reconcile' : 'not now'}`);
      this.pending ||= pass;
    }
  }

  /** Delivers the App's event when it changed (its status written, its spec edited). */
  private deliverApp(): void {
    const app = this.cluster.app(NS, 'web');
    if (!app || app.metadata.resourceVersion === this.appVersion) return;
    this.appVersion = app.metadata.resourceVersion;
    this.filter.appEvent(app);
  }

  /** The pod events, then the App's, then what the filter held (time passes), as a watcher would see them. */
  private deliver(): void {
    this.deliverPods();
    this.deliverApp();
    const due = this.filter.due();
    if (due > 0) this.log.push(`  held: ${due} enqueued`);
    this.pending ||= due > 0;
  }

  private async reconcile(): Promise<void> {
    this.reconciles++;
    const client = this.cluster.client();
    const read = await planLoop(client, NS, 'web', this.clock.now, { verdicts: this.verdicts, log: silent });
    if (!read) return;
    await execute(read.plan, read.observed.app, { client, log: silent, now: this.clock.now });
  }

  /** Runs the reconciles the delivered events asked for until none is pending (the queue drained). */
  async settle(): Promise<void> {
    for (let i = 0; this.pending; i++) {
      if (i > 50) throw new Error('the reconciles do not settle');
      this.pending = false;
      await this.reconcile();
      this.deliver();
    }
  }

  /** The status a reconcile of the pods as they are computes (the plan's status; executed by nobody). */
  async unfilteredStatus(): Promise<AppStatus | undefined> {
    const read = await planLoop(this.cluster.client(), NS, 'web', this.clock.now, { verdicts: this.verdicts, log: silent });
    return read?.plan.status;
  }

  /** Applies `op` (to the pod at `pick`, modulo the pods there are), delivers each write's events and settles. */
  async step(op: Op, pick: number): Promise<void> {
    this.clock.advance(1000);
    const pods = this.pods();
    const pod = pods.length > 0 ? pods[pick % pods.length] : undefined;
    this.log.push(`${op} ${pod?.metadata.name ?? '-'}`);
    if (op === 'scale') this.cluster.editApp(NS, 'web', { replicas: 1 + (pick % 4) });
    if (op === 'scale' || op === 'annotateApp') this.pending = true; // an App event (a spec or metadata edit) is enqueued
    if (pod && op !== 'scale' && op !== 'annotateApp') this.change(op, pod, pick);
    this.deliver();
    await this.settle();
  }

  private change(op: PodChange, pod: Stored<Pod>, pick: number): void {
    const writes = podChange(op, pod, this.clock.now().toISOString(), pick);
    for (const [i, w] of writes.entries()) {
      if (i > 0) this.deliverPods(); // the writes of one change come within the holds
      if (w === 'remove') {
        this.cluster.removePod(NS, pod.metadata.name);
        continue;
      }
      // Writes may share parts: each is stored as its own object, as the apiserver would.
      const next = structuredClone(w);
      next.metadata.resourceVersion = `w${++this.rv}`;
      this.cluster.pods.set(`${NS}/${pod.metadata.name}`, next);
    }
  }
}

/** The pods' lines of a failure report: name, phase, readiness, terminating, finalizers, revision. */
export function describePods(pods: readonly Stored<Pod>[]): string[] {
  return pods.map((p) => {
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '-';
    const del = p.metadata.deletionTimestamp ? ' terminating' : '';
    const fin = (p.metadata.finalizers ?? []).length > 0 ? ` finalizers=${(p.metadata.finalizers ?? []).join(',')}` : '';
    return `${p.metadata.name} ${p.status?.phase ?? 'Pending'} Ready=${ready}${del}${fin} rev=${p.metadata.labels?.[Label.revision] ?? ''}`;
  });
}
