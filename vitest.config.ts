import { defineConfig } from 'vitest/config';

/**
 * Integration files that disturb what every file shares, or measure time: they run alone, after the parallel
 * group (`sequence.groupOrder`). The reasons, per file, are in docs/development.md (Test layers).
 */
export const SERIAL_INTEGRATION = [
  // Restart or empty shared components, or start a control plane of their own.
  'test/integration/app/control-plane-restarts.test.ts',
  'test/integration/app/failover-rollout.test.ts',
  'test/integration/ctrl-c.test.ts',
  'test/integration/watcher/watch-faults.test.ts',
  'test/integration/watcher/redis-loss.test.ts',
  // Cluster-scoped objects: ImageLists, nodes (taints, cordons, dedicated nodes and their daemons), CRDs,
  // PriorityClasses, StorageClasses, ClusterRoles (watcher/board-namespaces), the install and the KEDA operator.
  'test/integration/app/admission.test.ts',
  'test/integration/app/inplace-calibrated.test.ts',
  'test/integration/app/prewarm*.test.ts',
  'test/integration/app/terminating-pods.test.ts',
  'test/integration/app/warm-pool.test.ts',
  'test/integration/cli/explain-prewarm.test.ts',
  'test/integration/crd-*.test.ts',
  'test/integration/daemon/**/*.test.ts',
  'test/integration/deploy/**/*.test.ts',
  'test/integration/imagelist/**/*.test.ts',
  'test/integration/keda/**/*.test.ts',
  'test/integration/kubelet.test.ts',
  'test/integration/reliability/**/*.test.ts',
  'test/integration/watcher/settled-resync.test.ts',
  // Time, fairness and memory measurements that a busy machine would distort; Chromium pages with 30 s waits;
  // `ebb` processes spawned with deadlines on how soon they start, log or exit.
  'test/integration/app/inplace-grace.test.ts',
  // Counts reads from the shared view against fresh ones: a view that lags on a busy machine is read fresh.
  'test/integration/app/view.test.ts',
  // Worker processes SIGKILLed and started again, waiting out lock expiry: their start-up under load decides.
  'test/integration/app/chaos.test.ts',
  'test/integration/app/inplace-chaos.test.ts',
  'test/integration/app/quarantine-culprit.test.ts',
  // Worker threads ended by their heap limit and started again, waiting out lock expiry.
  'test/integration/watcher/worker-thread.test.ts',
  // Failed once beside another file on a machine at load 20 (passed alone): here until that is understood.
  'test/integration/app/lifecycle.test.ts',
  'test/integration/app/priority-deadline.test.ts',
  'test/integration/attack/**/*.test.ts',
  'test/integration/queue/**/*.test.ts',
  'test/integration/watcher/bad-input.test.ts',
  'test/integration/watcher/board*.test.ts',
  'test/integration/watcher/rollouts-*.test.ts',
  'test/integration/watcher/fairness.test.ts',
  'test/integration/watcher/one-job-per-object.test.ts',
  'test/integration/watcher/owner-gone.test.ts',
  'test/integration/watcher/status-only.test.ts',
  'test/integration/watcher/timers.test.ts',
  'test/integration/watcher/two-watchers.test.ts',
];

const integration = {
  globalSetup: ['test/integration/global-setup.ts'],
  setupFiles: ['test/integration/leave-nothing-behind.ts'],
  // Generous: every wait inside is for a condition, so a loaded machine only makes a passing test slower.
  testTimeout: 240_000,
  hookTimeout: 180_000,
};

// Three groups, one after the other: the unit files, two at a time; the integration files that share the sandbox
// peacefully, two at a time; then, one file at a time, the integration files above and the layers with a sandbox
// of their own. The unit files' group runs alone so that their timing checks never share the machine with a
// sandbox scenario.
// Unit tests that start redis-server, spawn node or openssl, or compile a CRD wait for that work: vitest's 5 s / 10 s
// defaults are a bound a loaded machine misses (a passing test takes no longer for a wider bound).
const UNIT_FILES = ['src/**/*.test.ts', 'harness/**/*.test.ts', 'test/unit/**/*.test.ts'];
// Unit files that replace process-wide things (signal handlers, `Date.now`, `process.stdout.write`): each runs in
// a fresh module graph (`unit-isolated`). The other unit files share their worker's (`isolate: false`): they hold
// no state outside their own objects.
const UNIT_ISOLATED = ['src/cli/signals.test.ts', 'harness/cli/local.test.ts', 'harness/sandbox/stop-on-signal.test.ts', 'test/unit/queue/timers.test.ts'];
const UNIT = { sequence: { groupOrder: 0 }, maxWorkers: 2, testTimeout: 60_000, hookTimeout: 60_000 };
const PARALLEL = { sequence: { groupOrder: 1 }, maxWorkers: 2 };
const ALONE = { sequence: { groupOrder: 2 }, maxWorkers: 1 };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          // One module graph per worker, not per file: most of a unit file's time was importing its modules.
          name: 'unit',
          include: UNIT_FILES,
          exclude: UNIT_ISOLATED,
          isolate: false,
          ...UNIT,
        },
      },
      {
        test: {
          name: 'unit-isolated',
          include: UNIT_ISOLATED,
          ...UNIT,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: SERIAL_INTEGRATION,
          ...integration,
          ...PARALLEL,
        },
      },
      {
        test: {
          name: 'integration-serial',
          include: SERIAL_INTEGRATION,
          ...integration,
          ...ALONE,
        },
      },
      {
        test: {
          // A sandbox with a real node (kubelet, containerd, runc; needs root): ebb's claims on real containers.
          name: 'realnode',
          include: ['test/realnode/**/*.test.ts'],
          globalSetup: ['test/realnode/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          ...ALONE,
        },
      },
      {
        test: {
          // Ctrl-C of a real-node run: spawns one and interrupts it once its real nodes are up. One machine runs one
          // sandbox with real nodes, so this never runs beside the realnode project: `make test` and
          // `make test-realnode` run it after, in a vitest run of its own.
          name: 'realnode-ctrl-c',
          include: ['test/realnode-ctrl-c/**/*.test.ts'],
          testTimeout: 480_000,
          ...ALONE,
        },
      },
      {
        test: {
          // Real containerd and a real registry as child processes (no apiserver): the CRI client's contract.
          name: 'runtime',
          include: ['test/runtime/**/*.test.ts'],
          globalSetup: ['test/runtime/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 150_000,
          ...ALONE,
        },
      },
    ],
  },
});
