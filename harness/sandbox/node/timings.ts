/**
 * Timings and faults of the simulated kubelet. Defaults are fast, for tests; `realisticProfile` is what
 * benchmarks use so that rollout times are comparable with a real node. Every value can be changed at run
 * time per node (`SimCluster.setTimings` / `setFaults`).
 */

export interface KubeletTimings {
  /** Pulling an image the node's store does not have (the transfer). A present image costs nothing. */
  pullMs: number;
  /** Creating the pod sandbox and its network: then PodReadyToStartContainers=True and the pod IP. */
  sandboxMs: number;
  /** Creating and starting one container (after its image is present). */
  startMs: number;
  /**
   * From container start until its first successful readiness (or startup) probe. Charged only for
   * containers with a readinessProbe (or startupProbe); a container without probes is ready once running,
   * as on a real kubelet.
   */
  readyMs: number;
  /** Attaching and mounting the pod's PVC-backed volumes, once per pod (in-place changes never re-attach). */
  volumeAttachMs: number;
  /** How long an init container (not a sidecar) runs before it exits 0. */
  initRunMs: number;
  /**
   * Stopping a container charges the pod's grace period (deletionGracePeriodSeconds on deletion,
   * terminationGracePeriodSeconds on a restart) capped at this value. Infinity honours the pod's grace fully.
   */
  terminationGraceCapMs: number;
  /**
   * The kubelet's own share of stopping a container, charged on top of the grace above: the runtime's stop and
   * the relist that sees the container gone, before the next step (a new instance, or the pod's teardown).
   */
  stopMs: number;
  /**
   * From a change of a readiness gate's condition (written by someone else) until the kubelet's Ready reflects
   * it: a real kubelet recomputes Ready in the pod sync the update triggers, after its runtime's next relist.
   * A sync made meanwhile for another cause (a spec change, a container started or stopped) reads the gate at
   * once (`gate-view.ts`).
   */
  readinessGateMs: number;
  /**
   * From the containers of a deleted pod stopped until the kubelet posts the final status and removes the pod
   * (its relist seeing the containers gone, the sandbox torn down, the status manager's delete).
   */
  teardownMs: number;
  /** Actuating an accepted in-place resize (PodResizeInProgress=True meanwhile). */
  resizeMs: number;
  /** Image pull back-off: first delay, doubled per failure up to the cap (kubelet: 10 s, 300 s). */
  pullBackoffMs: number;
  pullBackoffCapMs: number;
  /** Crash-loop back-off: first delay before the second restart, doubled up to the cap (kubelet: 10 s, 300 s). */
  crashBackoffMs: number;
  crashBackoffCapMs: number;
  /** Lease renewal interval (kubelet: 10 s; leaseDurationSeconds is 40). */
  leaseRenewMs: number;
  /** Node status check interval (kubelet nodeStatusUpdateFrequency: 10 s). */
  nodeStatusUpdateMs: number;
  /** Node status is re-posted at least this often even when unchanged (kubelet nodeStatusReportFrequency: 5 min). */
  nodeStatusReportMs: number;
  /** Kubelet image pulls on a node run one at a time (kubelet serializeImagePulls, default true). */
  serializeImagePulls: boolean;
}

export interface KubeletFaults {
  /** Containers of these images exit `crashExitCode` `crashAfterMs` after every start (a crash loop). */
  crashImages: string[];
  /**
   * Images matching this regular expression crash too. The default matches repositories whose last path
   * component starts with `crashloop` (`example.com/crashloop-app:v2`), so tests that run in another process
   * than the sandbox can ask for a crashing image by name. Empty: no pattern.
   */
  crashImagePattern: string;
  crashAfterMs: number;
  crashExitCode: number;
  /** Kubelet pulls of these images fail on this node (in addition to `SimRegistry.failPulls`, which fails everywhere). */
  failPullImages: string[];
  /** Multiplies every delay of this node: a slow node. */
  slowdown: number;
}

/** Fast defaults for tests. */
export const defaultTimings: Readonly<KubeletTimings> = Object.freeze({
  pullMs: 200,
  sandboxMs: 50,
  startMs: 100,
  readyMs: 100,
  volumeAttachMs: 0,
  initRunMs: 50,
  terminationGraceCapMs: 100,
  stopMs: 0,
  readinessGateMs: 0,
  teardownMs: 0,
  resizeMs: 50,
  pullBackoffMs: 400,
  pullBackoffCapMs: 3_000,
  crashBackoffMs: 400,
  crashBackoffCapMs: 3_000,
  leaseRenewMs: 10_000,
  nodeStatusUpdateMs: 10_000,
  nodeStatusReportMs: 300_000,
  serializeImagePulls: true,
});

/**
 * A node as slow as a real one, for benchmarks: calibrated against a real kubelet (v1.34, containerd, runc) running
 * the sandbox's sample app (a Go HTTP server that exits on SIGTERM, an HTTP readiness probe every 1 s, grace 1 s),
 * by `node bench/realnode-calibrate.ts --samples 5` on a quiet machine (2026-11-30; BENCHMARKS, "The simulator
 * calibrated by the real node"). Real medians, and how this profile reaches them:
 *
 *   in place with ebb's gate   image patch → Ready 2.0 s     stop 1.05 + start 0.9 + readiness 0.05
 *   readiness gate             changed → Ready 2.0 s         readinessGateMs (a gate change alone; a sync for a
 *                                                            spec or container change reads the gate at once)
 *   delete → pod gone          3.0 s                         stop 1.05 + teardown 1.95 (the grace is not charged:
 *                                                            the app exits on SIGTERM at once)
 *   created → Ready            1.8 s (image present)         sandbox 0.6 + start 0.9 + readiness 0.05
 *   created → Pulling          0.7 s (image absent)          sandbox 0.6
 *   a bound PVC                +0.1 s over a pod without     volume attach 0.3
 *
 * The real kubelet reports a container running and ready in one status write (its probe passes before the next
 * status), hence a readiness of 0.05 s. Not expressed: its in-place restart without ebb's gate writes takes 3.0 s
 * (a second more than with them; this profile gives 2.0 s), and its steps move in whole one-second relists with
 * load. Not calibrated: `pullMs` (a parameter of the workload: image size over registry bandwidth; benchmarks set
 * it), `initRunMs`, `resizeMs`, and the kubelet's own back-off constants (taken from its code).
 */
export const realisticProfile: Readonly<KubeletTimings> = Object.freeze({
  ...defaultTimings,
  pullMs: 3_000,
  sandboxMs: 600,
  startMs: 900,
  readyMs: 50,
  volumeAttachMs: 300,
  initRunMs: 500,
  terminationGraceCapMs: 0,
  stopMs: 1_050,
  readinessGateMs: 2_000,
  teardownMs: 1_950,
  resizeMs: 500,
  pullBackoffMs: 10_000,
  pullBackoffCapMs: 300_000,
  crashBackoffMs: 10_000,
  crashBackoffCapMs: 300_000,
});

export const defaultFaults: Readonly<KubeletFaults> = Object.freeze({
  crashImages: [],
  crashImagePattern: '(^|/)crashloop[^/:@]*([:@]|$)',
  crashAfterMs: 200,
  crashExitCode: 1,
  failPullImages: [],
  slowdown: 1,
});

/** A delay of this node, after the slow-node fault. */
export function scaled(ms: number, faults: Pick<KubeletFaults, 'slowdown'>): number {
  if (!Number.isFinite(ms)) return ms;
  return Math.max(0, Math.round(ms * (faults.slowdown > 0 ? faults.slowdown : 1)));
}

/** Capped exponential back-off: `base * 2^(n-1)` for the n-th failure (n ≥ 1), at most `cap`. */
export function backoffFor(failures: number, baseMs: number, capMs: number): number {
  if (failures <= 0) return 0;
  return Math.min(capMs, baseMs * 2 ** Math.min(failures - 1, 30));
}
