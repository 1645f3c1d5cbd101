/**
 * Scenario harness: loops read → plan → execute (the real planner and executor on the fake apiserver) →
 * fake kubelet tick, and checks invariants after every step and at every pod creation (`invariants.ts`). The
 * first breach fails the step it happened in, unless the test opted out of that invariant by name.
 */
import { pino } from 'pino';
import type { App } from '../../../src/api/app.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Annotation, Label, Reason } from '../../../src/api/keys.ts';
import { maxUnavailableOf } from '../../../src/api/int-or-percent.ts';
import { IN_PLACE_GATE, podIsUpdatingInPlace } from '../../../src/workers/inplace/index.ts';
import { timerId } from '../../../src/queue/names.ts';
import { execute } from '../../../src/workers/app/executor.ts';
import type { Pod } from '../../../src/kube/types.ts';
import type { PullBudget } from '../../../src/workers/shared/pull-budget.ts';
import { planLoop } from '../../../src/workers/app/plan-loop.ts';
import { AdmissionVerdicts } from '../../../src/workers/app/admission/dry-run.ts';
import type { Plan } from '../../../src/workers/app/model/plan.ts';
import { getOrdinal, getPodRevision, isRunningAndAvailable, isTerminating, isUnavailable } from '../../../src/workers/app/pods/predicates.ts';
import type { AnalysisIO } from '../../../src/workers/app/model/analysis-io.ts';
import { Clock } from '../../../harness/fakes/clock.ts';
import { FakeCluster } from '../../../harness/fakes/cluster.ts';
import { FakeKubelet, type KubeletOptions } from '../../../harness/fakes/kubelet.ts';
import { makeApp, NS } from './fixtures.ts';
import { ordinalRange } from '../../../src/workers/app/pods/pod-set.ts';
import {
  BreachLog,
  checkArmedUnavailable,
  checkDisruption,
  checkIdentity,
  checkPartition,
  checkPaused,
  type Found,
  type InvariantName,
  type PodView,
  type Range,
} from './invariants.ts';

const silent = pino({ level: 'silent' });

export interface Invariants {
  /**
   * Never more than this many replicas unavailable after a reconcile that made a replica unavailable (checked
   * while `armed`; pods failing by themselves, or already unavailable pods being replaced, are not judged).
   */
  maxUnavailable?: number;
  /** Pods below this ordinal keep their UID (checked while `armed`). */
  partition?: number;
}

/** The gate released early: True, InPlaceContainersRestarting, once the kubelet has observed the pod's spec. */
function releasedEarly(pod: Pod, gate: { status?: string; reason?: string } | undefined): boolean {
  const observed = (pod.status?.observedGeneration ?? 0) >= (pod.metadata.generation ?? Infinity);
  return gate?.status === 'True' && gate.reason === Reason.inPlaceContainersRestarting && observed;
}

export class Scenario {
  readonly clock = new Clock();
  readonly cluster = new FakeCluster(this.clock.now);
  readonly kubelet: FakeKubelet;
  readonly name: string;
  /** What every breach said, in order (allowed ones included). */
  readonly violations: string[] = [];
  readonly breaches = new BreachLog();
  /** Steps taken so far. */
  steps = 0;
  readonly plans: Plan[] = [];
  /** Reconciles that listed the claims. */
  claimReads = 0;
  invariants: Invariants = {};
  armed = false;
  /** Most replicas unavailable at once while armed. */
  peakUnavailable = 0;
  private frozen = new Map<number, PodView>();
  /** What of each plan is executed (a worker killed mid-plan performs a prefix of it); all of it when unset. */
  interfere: ((p: Plan) => Plan) | undefined;
  /** The cluster's pre-warm pull budget the plan loop asks; unset: no limit. */
  budget: PullBudget | undefined;
  /** What web analysis checks measure through (none: they are inconclusive). */
  analysisIO: AnalysisIO | undefined;
  /** Reconcile errors are recorded (the queue would retry) instead of thrown. */
  tolerateErrors = false;
  readonly errors: unknown[] = [];
  /** The worker's memory of accepted replacement revisions (one worker process for the whole scenario). */
  readonly verdicts = new AdmissionVerdicts(() => this.clock.now().getTime());

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

  /**
   * Lets this test breach `invariants` without failing (each breach is still in `violations`): only for a test
   * that injects the breach on purpose, with the reason.
   */
  allowInvariantBreaches(invariants: readonly InvariantName[], reason: string): this {
    this.breaches.allow(invariants, reason);
    return this;
  }

  private breach(found: Found): void {
    this.violations.push(found.detail);
    this.breaches.record(found, this.steps + 1);
  }

  private view(): PodView[] {
    const { minReady } = this.range();
    return this.pods().map((p) => ({
      uid: p.metadata.uid ?? '',
      name: p.metadata.name ?? '',
      ordinal: getOrdinal(this.name, p.metadata.name),
      revision: getPodRevision(p),
      terminating: isTerminating(p),
      failed: p.status?.phase === 'Failed',
      available: !isUnavailable(p, minReady, this.clock.now()),
      updating: podIsUpdatingInPlace(p),
      images: JSON.stringify(((p.spec?.['containers'] ?? []) as { image: string }[]).map((c) => c.image)),
    }));
  }

  edit(specPatch: unknown): void {
    this.cluster.editApp(NS, this.name, specPatch);
  }

  /** Starts checking the update invariants, from the current pods. */
  arm(invariants: Invariants): void {
    this.invariants = invariants;
    this.armed = true;
    this.frozen = new Map(
      this.view()
        .filter((p) => p.ordinal < (invariants.partition ?? 0))
        .map((p) => [p.ordinal, p]),
    );
  }

  private checkCreation(pod: Pod): void {
    const app = this.app();
    const ordinal = getOrdinal(this.name, pod.metadata.name);
    if (app.spec.podManagementPolicy !== 'OrderedReady') return;
    const minReady = app.spec.minReadySeconds ?? 0;
    for (const o of ordinalRange(app).ordinals) {
      if (o >= ordinal) break;
      const p = this.cluster.pods.get(`${NS}/${this.name}-${o}`);
      if (!p || isTerminating(p) || !isRunningAndAvailable(p, minReady, this.clock.now()))
        this.breach({ invariant: 'ordering', pod: pod.metadata.name, detail: `created ${pod.metadata.name} while ${this.name}-${o} is not available` });
    }
  }

  async reconcile(): Promise<Plan | undefined> {
    const client = { ...this.cluster.client(), ...(this.analysisIO ? { analysis: this.analysisIO } : {}) };
    // The worker's own read → plan path: claims are listed only when the plan needs them.
    const read = await planLoop(client, NS, this.name, this.clock.now, { verdicts: this.verdicts, log: silent, budget: this.budget });
    if (!read) return undefined;
    const { observed, plan: p } = read;
    this.claimReads += observed.claims === undefined ? 0 : 1;
    this.plans.push(p);
    // The worker turns a wait into a timer: its reason must be one the timers queue takes.
    if (p.wait) timerId({ kind: 'App', namespace: NS, name: this.name }, p.wait.reason);
    try {
      await execute(this.interfere ? this.interfere(p) : p, observed.app, { client, log: silent, now: this.clock.now, budget: this.budget });
    } catch (err) {
      if (!this.tolerateErrors) throw err;
      this.errors.push(err);
    }
    return p;
  }

  private range(): Range & { minReady: number } {
    const app = this.app();
    const start = app.spec.ordinals?.start ?? 0;
    return { start, end: start + (app.spec.replicas ?? 1), minReady: app.spec.minReadySeconds ?? 0 };
  }

  /**
   * A pod with the state annotation and the gate has the gate False: it is out of its Services while it changes;
   * or released early (True, InPlaceContainersRestarting) once the kubelet has observed the image patch
   * (`status.observedGeneration`), when Ready follows the new containers.
   */
  private checkGates(): Found[] {
    const out: Found[] = [];
    for (const p of this.pods()) {
      const gated = (p.spec?.readinessGates ?? []).some((g) => g.conditionType === IN_PLACE_GATE);
      const gate = p.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
      if (gated && p.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined && gate?.status !== 'False' && !releasedEarly(p, gate))
        out.push({ invariant: 'gate', pod: p.metadata.name, detail: `${p.metadata.name} is updating with gate ${gate?.status}` });
    }
    return out;
  }

  /** The App's own rolling-update limit, or undefined when it starts no updates (OnDelete). */
  private specLimit(): number | undefined {
    const app = this.app();
    if (app.spec.updateStrategy?.type === 'OnDelete') return undefined;
    const r = maxUnavailableOf(app.spec.updateStrategy?.rollingUpdate?.maxUnavailable, app.spec.replicas ?? 1);
    return r.ok ? r.value : undefined;
  }

  private checkInvariants(before: PodView[], pausedBefore: boolean): void {
    const after = this.view();
    const range = this.range();
    const found = [
      ...checkIdentity(after, new Map(this.pods().map((p) => [p.metadata.name ?? '', p.metadata.labels?.[Label.podIndex]]))),
      ...this.checkGates(),
    ];
    if (pausedBefore) found.push(...checkPaused(before, after, range));
    const limit = this.specLimit();
    if (limit !== undefined) found.push(...checkDisruption(before, after, range, limit));
    if (this.armed) {
      if (this.invariants.maxUnavailable !== undefined) {
        const armed = checkArmedUnavailable(before, after, range, this.invariants.maxUnavailable);
        this.peakUnavailable = Math.max(this.peakUnavailable, armed.unavailable);
        found.push(...armed.found);
      }
      found.push(...checkPartition(this.frozen, after));
    }
    for (const f of found) this.breach(f);
  }

  /** One reconcile, invariant checks, one kubelet tick. */
  async step(): Promise<Plan | undefined> {
    const before = this.view();
    const pausedBefore = this.app().spec.updateStrategy?.rollingUpdate?.paused === true;
    const p = await this.reconcile();
    this.checkInvariants(before, pausedBefore);
    this.steps++;
    this.breaches.raise();
    this.kubelet.tick();
    return p;
  }

  /** Steps until `done` holds after a step (and a quiet reconcile), at most `max` steps; returns the steps taken. */
  async runUntil(done: (s: Scenario) => boolean, max = 200): Promise<number> {
    for (let i = 1; i <= max; i++) {
      await this.step();
      if (done(this)) return i;
    }
    throw new Error(
      `no convergence after ${max} steps; pods: ${this.view()
        .map((p) => `${p.name}@${p.revision}${p.terminating ? '(T)' : ''}`)
        .join(' ')}; status ${JSON.stringify(this.app().status)}`,
    );
  }

  /** All `replicas` pods exist, run `revision`, are available (no in-place update left), and status says so. */
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
