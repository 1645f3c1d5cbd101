/**
 * Scenario harness: loops read → plan → execute (the real planner and executor on the fake apiserver) →
 * fake kubelet tick, and checks invariants after every step and at every pod creation.
 */
import { pino } from 'pino';
import type { App } from '../../../src/api/app.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Label } from '../../../src/api/keys.ts';
import { execute } from '../../../src/workers/app/executor.ts';
import { FakeCluster } from '../../../src/workers/app/fake-client.ts';
import type { Pod } from '../../../src/workers/app/kube-types.ts';
import { readObserved } from '../../../src/workers/app/observe.ts';
import { plan, type Plan } from '../../../src/workers/app/planner.ts';
import { getOrdinal, getPodRevision, isRunningAndAvailable, isTerminating, isUnavailable } from '../../../src/workers/app/pod-predicates.ts';
import { Clock, FakeKubelet, type KubeletOptions } from './fake-kubelet.ts';
import { makeApp, NS } from './fixtures.ts';

const silent = pino({ level: 'silent' });

interface PodView {
  uid: string;
  name: string;
  ordinal: number;
  revision: string | undefined;
  terminating: boolean;
  failed: boolean;
}

export interface Invariants {
  /** Never more than this many replicas unavailable (checked while `armed`). */
  maxUnavailable?: number;
  /** Pods below this ordinal keep their UID (checked while `armed`). */
  partition?: number;
}

export class Scenario {
  readonly clock = new Clock();
  readonly cluster = new FakeCluster(this.clock.now);
  readonly kubelet: FakeKubelet;
  readonly name: string;
  readonly violations: string[] = [];
  readonly plans: Plan[] = [];
  invariants: Invariants = {};
  armed = false;
  /** Most replicas unavailable at once while armed. */
  peakUnavailable = 0;
  private frozen = new Map<number, string>();

  constructor(spec: Partial<AppSpec>, kubelet: Partial<KubeletOptions> = {}, name = 'web') {
    this.name = name;
    this.kubelet = new FakeKubelet(this.cluster, this.clock, kubelet);
    this.cluster.addApp(makeApp(name, spec));
    this.cluster.beforeCreatePod = (pod) => this.checkCreation(pod);
  }

  app(): App {
    const app = this.cluster.app(NS, this.name);
    if (!app) throw new Error('app gone');
    return app;
  }

  /** Live pods by ordinal (terminating ones included). */
  pods(): Pod[] {
    return this.cluster.podsOf(NS).sort((a, b) => getOrdinal(this.name, a.metadata.name) - getOrdinal(this.name, b.metadata.name));
  }

  private view(): PodView[] {
    return this.pods().map((p) => ({
      uid: p.metadata.uid ?? '',
      name: p.metadata.name ?? '',
      ordinal: getOrdinal(this.name, p.metadata.name),
      revision: getPodRevision(p),
      terminating: isTerminating(p),
      failed: p.status?.phase === 'Failed',
    }));
  }

  edit(specPatch: unknown): void {
    this.cluster.editApp(NS, this.name, specPatch);
  }

  /** Starts checking the update invariants, from the current pods. */
  arm(invariants: Invariants): void {
    this.invariants = invariants;
    this.armed = true;
    this.frozen = new Map(this.view().filter((p) => p.ordinal < (invariants.partition ?? 0)).map((p) => [p.ordinal, p.uid]));
  }

  private checkCreation(pod: Pod): void {
    const app = this.app();
    const ordinal = getOrdinal(this.name, pod.metadata.name);
    if (app.spec.podManagementPolicy !== 'OrderedReady') return;
    const minReady = app.spec.minReadySeconds ?? 0;
    for (let o = app.spec.ordinals?.start ?? 0; o < ordinal; o++) {
      const p = this.cluster.pods.get(`${NS}/${this.name}-${o}`);
      if (!p || isTerminating(p) || !isRunningAndAvailable(p, minReady, this.clock.now())) this.violations.push(`created ${pod.metadata.name} while ${this.name}-${o} is not available`);
    }
  }

  async reconcile(): Promise<Plan | undefined> {
    const client = this.cluster.client();
    const observed = await readObserved(client, NS, this.name);
    if (!observed) return undefined;
    const p = plan(observed, this.clock.now());
    this.plans.push(p);
    await execute(p, observed.app, { client, log: silent, now: this.clock.now });
    return p;
  }

  private checkIdentity(after: PodView[]): void {
    const ordinals = after.map((p) => p.ordinal);
    if (new Set(ordinals).size !== ordinals.length) this.violations.push(`two pods share an ordinal: ${ordinals.join(',')}`);
    for (const p of this.pods()) {
      if (p.metadata.labels?.[Label.podIndex] !== String(getOrdinal(this.name, p.metadata.name))) this.violations.push(`${p.metadata.name} has a wrong pod-index label`);
    }
  }

  private range(): { start: number; end: number; minReady: number } {
    const app = this.app();
    const start = app.spec.ordinals?.start ?? 0;
    return { start, end: start + (app.spec.replicas ?? 1), minReady: app.spec.minReadySeconds ?? 0 };
  }

  /** While paused, no live, healthy-phase pod in range may be deleted. */
  private checkPaused(before: PodView[], after: PodView[]): void {
    const { start, end } = this.range();
    for (const b of before) {
      const now = after.find((a) => a.uid === b.uid);
      const inRange = b.ordinal >= start && b.ordinal < end;
      if (inRange && !b.terminating && !b.failed && (!now || now.terminating)) this.violations.push(`paused, yet ${b.name} (${b.revision ?? ''}) was deleted`);
    }
  }

  private checkUnavailable(limit: number): void {
    const { start, end, minReady } = this.range();
    let unavailable = 0;
    for (let o = start; o < end; o++) if (isUnavailable(this.cluster.pods.get(`${NS}/${this.name}-${o}`), minReady, this.clock.now())) unavailable++;
    this.peakUnavailable = Math.max(this.peakUnavailable, unavailable);
    if (unavailable > limit) this.violations.push(`${unavailable} unavailable > maxUnavailable ${limit}`);
  }

  private checkInvariants(before: PodView[], pausedBefore: boolean): void {
    const after = this.view();
    this.checkIdentity(after);
    if (pausedBefore) this.checkPaused(before, after);
    if (!this.armed) return;
    if (this.invariants.maxUnavailable !== undefined) this.checkUnavailable(this.invariants.maxUnavailable);
    for (const [ordinal, uid] of this.frozen) {
      if (!after.some((a) => a.uid === uid && !a.terminating)) this.violations.push(`pod ${ordinal} below the partition was replaced`);
    }
  }

  /** One reconcile, invariant checks, one kubelet tick. */
  async step(): Promise<Plan | undefined> {
    const before = this.view();
    const pausedBefore = this.app().spec.updateStrategy?.rollingUpdate?.paused === true;
    const p = await this.reconcile();
    this.checkInvariants(before, pausedBefore);
    this.kubelet.tick();
    return p;
  }

  /** Steps until `done` holds after a step (and a quiet reconcile), at most `max` steps; returns the steps taken. */
  async runUntil(done: (s: Scenario) => boolean, max = 200): Promise<number> {
    for (let i = 1; i <= max; i++) {
      await this.step();
      if (done(this)) return i;
    }
    throw new Error(`no convergence after ${max} steps; pods: ${this.view().map((p) => `${p.name}@${p.revision}${p.terminating ? '(T)' : ''}`).join(' ')}; status ${JSON.stringify(this.app().status)}`);
  }

  /** All `replicas` pods exist, run `revision`, are available, and status says so. */
  converged(revision?: string): boolean {
    const app = this.app();
    const s = app.status;
    const want = app.spec.replicas ?? 1;
    const rev = revision ?? s?.updateRevision;
    const pods = this.pods();
    return (
      pods.length === want &&
      pods.every((p) => !isTerminating(p) && getPodRevision(p) === rev && isRunningAndAvailable(p, app.spec.minReadySeconds ?? 0, this.clock.now())) &&
      s?.readyReplicas === want &&
      s.availableReplicas === want &&
      s.updatedReplicas === want &&
      s.currentRevision === rev &&
      s.updateRevision === rev &&
      s.observedGeneration === app.metadata.generation
    );
  }

  /** Pods (live, not terminating) per revision. */
  revisionCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.view()) if (!p.terminating) out[p.revision ?? ''] = (out[p.revision ?? ''] ?? 0) + 1;
    return out;
  }
}
