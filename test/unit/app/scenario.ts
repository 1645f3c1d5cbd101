/**
 * Scenario harness: loops read → plan → execute (the real planner and executor on the fake apiserver) →
 * fake kubelet tick, and checks invariants after every step and at every pod creation.
 */
import { pino } from 'pino';
import type { App } from '../../../src/api/app.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Annotation, Label } from '../../../src/api/keys.ts';
import { IN_PLACE_GATE, podIsUpdatingInPlace } from '../../../src/workers/inplace/index.ts';
import { timerId } from '../../../src/queue/names.ts';
import { execute } from '../../../src/workers/app/executor.ts';
import type { Pod } from '../../../src/kube/types.ts';
import { planLoop } from '../../../src/workers/app/plan-loop.ts';
import { AdmissionVerdicts } from '../../../src/workers/app/admission/dry-run.ts';
import type { Plan } from '../../../src/workers/app/planner.ts';
import { getOrdinal, getPodRevision, isRunningAndAvailable, isTerminating, isUnavailable } from '../../../src/workers/app/pods/predicates.ts';
import { Clock } from '../../../harness/fakes/clock.ts';
import { FakeCluster } from '../../../harness/fakes/cluster.ts';
import { FakeKubelet, type KubeletOptions } from '../../../harness/fakes/kubelet.ts';
import { makeApp, NS } from './fixtures.ts';
import { ordinalRange } from '../../../src/workers/app/pods/pod-set.ts';

const silent = pino({ level: 'silent' });

interface PodView {
  uid: string;
  name: string;
  ordinal: number;
  revision: string | undefined;
  terminating: boolean;
  failed: boolean;
  /** An in-place update is under way (state annotation, or gate False with StartInPlaceUpdate). */
  updating: boolean;
  images: string;
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
  /** Reconciles that listed the claims. */
  claimReads = 0;
  invariants: Invariants = {};
  armed = false;
  /** Most replicas unavailable at once while armed. */
  peakUnavailable = 0;
  private frozen = new Map<number, PodView>();
  /** What of each plan is executed (a worker killed mid-plan performs a prefix of it); all of it when unset. */
  interfere: ((p: Plan) => Plan) | undefined;
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

  private view(): PodView[] {
    return this.pods().map((p) => ({
      uid: p.metadata.uid ?? '',
      name: p.metadata.name ?? '',
      ordinal: getOrdinal(this.name, p.metadata.name),
      revision: getPodRevision(p),
      terminating: isTerminating(p),
      failed: p.status?.phase === 'Failed',
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
        this.violations.push(`created ${pod.metadata.name} while ${this.name}-${o} is not available`);
    }
  }

  async reconcile(): Promise<Plan | undefined> {
    const client = this.cluster.client();
    // The worker's own read → plan path: claims are listed only when the plan needs them.
    const read = await planLoop(client, NS, this.name, this.clock.now, { verdicts: this.verdicts, log: silent });
    if (!read) return undefined;
    const { observed, plan: p } = read;
    this.claimReads += observed.claims === undefined ? 0 : 1;
    this.plans.push(p);
    // The worker turns a wait into a timer: its reason must be one the timers queue takes.
    if (p.wait) timerId({ kind: 'App', namespace: NS, name: this.name }, p.wait.reason);
    try {
      await execute(this.interfere ? this.interfere(p) : p, observed.app, { client, log: silent, now: this.clock.now });
    } catch (err) {
      if (!this.tolerateErrors) throw err;
      this.errors.push(err);
    }
    return p;
  }

  private checkIdentity(after: PodView[]): void {
    const ordinals = after.map((p) => p.ordinal);
    if (new Set(ordinals).size !== ordinals.length) this.violations.push(`two pods share an ordinal: ${ordinals.join(',')}`);
    for (const p of this.pods()) {
      if (p.metadata.labels?.[Label.podIndex] !== String(getOrdinal(this.name, p.metadata.name)))
        this.violations.push(`${p.metadata.name} has a wrong pod-index label`);
    }
  }

  private range(): { start: number; end: number; minReady: number } {
    const app = this.app();
    const start = app.spec.ordinals?.start ?? 0;
    return { start, end: start + (app.spec.replicas ?? 1), minReady: app.spec.minReadySeconds ?? 0 };
  }

  /**
   * While paused, no live, healthy-phase pod in range may be deleted, and no in-place update may start (one
   * already under way may finish, and may move the pod's revision label).
   */
  private checkPaused(before: PodView[], after: PodView[]): void {
    const { start, end } = this.range();
    for (const b of before) {
      const now = after.find((a) => a.uid === b.uid);
      const inRange = b.ordinal >= start && b.ordinal < end;
      if (inRange && !b.terminating && !b.failed && (!now || now.terminating)) this.violations.push(`paused, yet ${b.name} (${b.revision ?? ''}) was deleted`);
      if (inRange && now && !b.updating && (now.updating || now.revision !== b.revision || now.images !== b.images))
        this.violations.push(`paused, yet ${b.name} was updated in place`);
    }
  }

  /** A pod with the state annotation and the gate has the gate False: it is out of its Services while it changes. */
  private checkGates(): void {
    for (const p of this.pods()) {
      const gated = (p.spec?.readinessGates ?? []).some((g) => g.conditionType === IN_PLACE_GATE);
      const gate = p.status?.conditions?.find((c) => c.type === IN_PLACE_GATE);
      if (gated && p.metadata.annotations?.[Annotation.inPlaceUpdateState] !== undefined && gate?.status !== 'False')
        this.violations.push(`${p.metadata.name} is updating with gate ${gate?.status}`);
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
    this.checkGates();
    if (pausedBefore) this.checkPaused(before, after);
    if (!this.armed) return;
    if (this.invariants.maxUnavailable !== undefined) this.checkUnavailable(this.invariants.maxUnavailable);
    for (const [ordinal, frozen] of this.frozen) {
      const now = after.find((a) => a.uid === frozen.uid && !a.terminating);
      if (!now) this.violations.push(`pod ${ordinal} below the partition was replaced`);
      else if (now.updating || now.revision !== frozen.revision || now.images !== frozen.images)
        this.violations.push(`pod ${ordinal} below the partition was updated in place`);
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
