/**
 * Property: whatever happens to an App's pods, once the pod events the watcher lets through have been
 * reconciled, the App's status is the status a reconcile of the same pods computes with no filter at all.
 * Sequences of pod changes are generated from a seeded PRNG (EBB_PROPERTY_SEED replays one run).
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../harness/seeded-random.ts';
import { appKey, podOwnerKey } from '../../../src/watcher/keys.ts';
import { podDigest } from '../../../src/watcher/pod-digest.ts';
import { filterPodEvent } from '../../../src/watcher/pod-filter.ts';
import { PodHolds } from '../../../src/watcher/pod-holds.ts';
import { describePods, FilteredWorld, OPS, type Op, type PodFilter } from './pod-filter-world.ts';

const SEED = Number(process.env['EBB_PROPERTY_SEED'] ?? 20261126);
const CASES = 250;
/** One generated sequence by its own seed (as a failure prints it), with its whole log. */
const ONE_CASE = process.env['EBB_PROPERTY_CASE'];

/**
 * The watcher's pod filter (`filterPodEvent`, as the pod source runs it) with its holds (`PodHolds`) on a timer
 * the world runs out when it delivers: a digest per pod, App events releasing the holds awaiting a status.
 */
function watcherFilter(released: Map<string, number>): PodFilter {
  const digests = new Map<string, number>();
  const timers = new Set<{ fn: () => void }>();
  let fired = 0;
  const holds = new PodHolds({
    fire: () => fired++,
    signal: new AbortController().signal,
    onReleased: (reason) => released.set(reason, (released.get(reason) ?? 0) + 1),
    timers: {
      set: (fn) => {
        const t = { fn };
        timers.add(t);
        return t;
      },
      clear: (t) => timers.delete(t as { fn: () => void }),
    },
  });
  const sink = { known: { lacks: () => false }, holds, onIgnored: () => undefined };
  const spec = { digestOf: podDigest, resource: 'pods' };
  return {
    podEvent: (type, pod) => {
      const key = podOwnerKey(pod);
      return key !== undefined && filterPodEvent(spec, sink, digests, { type, object: pod }, key);
    },
    appEvent: (app) => {
      const key = appKey(app);
      if (key) holds.appEvent(key);
    },
    due: () => {
      for (const t of [...timers]) {
        timers.delete(t);
        t.fn();
      }
      const n = fired;
      fired = 0;
      return n;
    },
  };
}

interface Case {
  seed: number;
  replicas: number;
  policy: 'OrderedReady' | 'Parallel';
  /** `scaleStrategy.maxUnavailable` (Parallel only): creations held while pods are unavailable. */
  scaleLimit: number | undefined;
  ops: [Op, number][];
}

function generate(seed: number): Case {
  const rnd = seededRandom(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const length = 10 + int(30);
  // Pods must exist and run before most changes mean anything: start and ready come up more often.
  const weighted: Op[] = [...OPS, 'start', 'ready', 'ready', 'kill', 'finish'];
  const policy = rnd() < 0.5 ? 'OrderedReady' : 'Parallel';
  return {
    seed,
    replicas: 1 + int(4),
    policy,
    scaleLimit: policy === 'Parallel' && rnd() < 0.5 ? 1 + int(2) : undefined,
    ops: Array.from({ length }, () => [weighted[int(weighted.length)] ?? 'ready', int(1000)] as [Op, number]),
  };
}

async function run(c: Case, released: Map<string, number>): Promise<{ world: FilteredWorld; mismatch: string | undefined }> {
  const world = new FilteredWorld(watcherFilter(released), {
    replicas: c.replicas,
    podManagementPolicy: c.policy,
    ...(c.scaleLimit === undefined ? {} : { scaleStrategy: { maxUnavailable: c.scaleLimit } }),
  });
  await world.settle();
  for (const [op, pick] of c.ops) await world.step(op, pick);
  const filtered = world.status();
  const unfiltered = await world.unfilteredStatus();
  if (JSON.stringify(filtered) === JSON.stringify(unfiltered)) return { world, mismatch: undefined };
  const fields = Object.keys({ ...filtered, ...unfiltered }).filter(
    (k) => JSON.stringify((filtered as Record<string, unknown>)[k]) !== JSON.stringify((unfiltered as Record<string, unknown>)[k]),
  );
  const show = (s: unknown): string => JSON.stringify(Object.fromEntries(fields.map((k) => [k, (s as Record<string, unknown>)[k]])));
  return {
    world,
    mismatch: [
      `seed ${c.seed} (${c.policy}, ${c.replicas} replicas, scale limit ${c.scaleLimit ?? '-'}): the status after the filtered events differs in ${fields.join(', ')}`,
      `  filtered:   ${show(filtered)}`,
      `  unfiltered: ${show(unfiltered)}`,
      '  pods:',
      ...describePods(world.pods()).map((l) => `    ${l}`),
      '  steps:',
      ...world.log.slice(ONE_CASE === undefined ? -30 : 0).map((l) => `    ${l}`),
    ].join('\n'),
  };
}

describe('the pod filter against an unfiltered reconcile', () => {
  it(`the status after the filtered events settle is the unfiltered status (${CASES} sequences, seed ${SEED})`, async () => {
    const seeds = seededRandom(SEED);
    const failures: string[] = [];
    const applied = new Map<Op, number>();
    const released = new Map<string, number>();
    let passed = 0;
    let dropped = 0;
    for (let i = 0; i < (ONE_CASE === undefined ? CASES : 1); i++) {
      const c = generate(ONE_CASE === undefined ? Math.floor(seeds() * 2 ** 31) : Number(ONE_CASE));
      for (const [op] of c.ops) applied.set(op, (applied.get(op) ?? 0) + 1);
      const { world, mismatch } = await run(c, released);
      passed += world.passed;
      dropped += world.dropped;
      if (mismatch) failures.push(mismatch);
    }
    // Every kind of change was generated often, and the filter did drop events (else it tests nothing).
    if (ONE_CASE === undefined) {
      for (const op of OPS) expect(applied.get(op) ?? 0, op).toBeGreaterThan(100);
      expect(dropped).toBeGreaterThan(passed / 4);
      // The holds did their part: the App's own deletes were released by its status, removals covered changes.
      expect(released.get('status-counted') ?? 0).toBeGreaterThan(50);
      expect(released.get('covered') ?? 0).toBeGreaterThan(50);
    }
    expect(failures.slice(0, 3).join('\n\n'), `${failures.length} of ${CASES} sequences`).toBe('');
  }, 120_000);
});
