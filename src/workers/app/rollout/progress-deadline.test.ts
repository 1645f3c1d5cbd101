import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../api/app-spec.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import type { Condition } from '../../../api/meta.ts';
import { parallel, rolling, rolloutWorld, summary, type PodRow } from '../../../../test/unit/app/rollout-world.ts';
import type { Plan } from '../model/plan.ts';
import { planned } from '../../../../test/unit/app/fixtures.ts';

const NOW = new Date('2025-06-01T00:10:00.000Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();
const deadline = (ru: object = {}, extra: Partial<AppSpec> = {}): Partial<AppSpec> => ({
  ...parallel,
  replicas: 3,
  progressDeadlineSeconds: 60,
  ...rolling({ maxUnavailable: 1, ...ru }),
  ...extra,
});
/** web-2 updated but never ready: the rollout cannot move on. */
const stuck: PodRow[] = [
  [0, 'ready', 'old'],
  [1, 'ready', 'old'],
  [2, 'unready', 'new'],
];
const exceededCondition: Condition = {
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'stuck',
  lastTransitionTime: '2025-06-01T00:05:00Z',
};

type Status = (revision: string) => Partial<AppStatus>;
const record =
  (seconds: number, count = 0): Status =>
  (revision) => ({ rolloutProgress: { revision, updatedAvailableReplicas: count, lastProgressTime: ago(seconds) } });
const exceededBefore: Status = () => ({ conditions: [exceededCondition] });

interface Expect {
  actions?: string[];
  /** Seconds since the recorded progress, or null for no record. */
  since?: number | null;
  progressing?: [string, string];
  paused?: [string, string];
  waitMs?: number | null;
}

function run(spec: Partial<AppSpec>, pods: PodRow[], status?: Status) {
  const base = rolloutWorld(spec, pods);
  const revision = base.app.status?.updateRevision ?? '';
  const obs = status ? rolloutWorld(spec, pods, status(revision)) : base;
  return planned(obs, NOW);
}

function check(p: Plan, want: Expect): void {
  const condition = (type: string) => p.status.conditions?.find((c) => c.type === type);
  const at = p.status.rolloutProgress?.lastProgressTime;
  const w = p.wait;
  const seen: Expect = {
    actions: summary(p.actions).map((s) => (s.startsWith('delete') ? 'deletePod' : s)),
    since: at === undefined ? null : (NOW.getTime() - Date.parse(at)) / 1000,
    progressing: [condition('Progressing')?.status ?? '', condition('Progressing')?.reason ?? ''],
    paused: [condition('Paused')?.status ?? '', condition('Paused')?.reason ?? ''],
    waitMs: w?.reason === 'progress-deadline' || w?.reason === 'canary-pause' ? w.afterMs : null,
  };
  const picked = Object.fromEntries(Object.keys(want).map((k) => [k, seen[k as keyof Expect]]));
  expect(picked).toEqual(want);
}

describe('progress deadline', () => {
  it.each<[string, Partial<AppSpec>, PodRow[], Status | undefined, Expect]>([
    ['no deadline: no clock, no wait', deadline({}, { progressDeadlineSeconds: undefined }), stuck, undefined, { since: null, waitMs: null }],
    [
      'a rollout starts: the clock starts, a timer for the deadline',
      deadline(),
      [
        [0, 'ready', 'old'],
        [1, 'ready', 'old'],
        [2, 'ready', 'old'],
      ],
      undefined,
      { actions: ['deletePod'], since: 0, waitMs: 60_000, progressing: ['True', 'RollingUpdate'] },
    ],
    ['no progress for 30 s: waits the other 30 s', deadline(), stuck, record(30), { actions: [], since: 30, waitMs: 30_000 }],
    [
      'a pod became updated and available: the clock restarts',
      deadline({ maxUnavailable: 1 }),
      [
        [0, 'ready', 'old'],
        [1, 'unready', 'old'],
        [2, 'ready', 'new'],
      ],
      record(50, 0),
      { since: 0, waitMs: 60_000 },
    ],
    ['a pod lost again is no progress: the high-water mark stays', deadline(), stuck, record(50, 1), { since: 50, waitMs: 10_000 }],
    [
      'exceeded: Progressing False ProgressDeadlineExceeded, an Event, no pause',
      deadline(),
      stuck,
      record(61),
      { actions: ['event ProgressDeadlineExceeded'], since: 61, progressing: ['False', 'ProgressDeadlineExceeded'], waitMs: null },
    ],
    [
      'still exceeded: no second Event',
      deadline(),
      stuck,
      (r) => ({ ...record(90)(r), ...exceededBefore(r) }),
      { actions: [], progressing: ['False', 'ProgressDeadlineExceeded'] },
    ],
    [
      'exceeded with pauseOnProgressDeadline: pauses the spec, the Event, Paused True; the clock is dropped',
      deadline({ pauseOnProgressDeadline: true }),
      stuck,
      record(61),
      {
        actions: ['pauseRollout', 'event ProgressDeadlineExceeded'],
        since: null,
        progressing: ['False', 'ProgressDeadlineExceeded'],
        paused: ['True', 'ProgressDeadlineExceeded'],
        waitMs: null,
      },
    ],
    [
      'exceeded with rollbackOnProgressDeadline (pauseOn too): no pause; aborted, the stuck pod goes back at once, no clock',
      deadline({ rollbackOnProgressDeadline: true, pauseOnProgressDeadline: true }),
      stuck,
      record(61),
      {
        actions: ['event ProgressDeadlineExceeded', 'event RolloutAborted', 'deletePod'],
        since: null,
        progressing: ['True', 'RollingBack'],
        waitMs: null,
      },
    ],
    [
      'paused by the deadline: the condition stays, no clock, no timer',
      deadline({ pauseOnProgressDeadline: true, paused: true }),
      stuck,
      exceededBefore,
      { actions: [], since: null, progressing: ['False', 'ProgressDeadlineExceeded'], paused: ['True', 'ProgressDeadlineExceeded'], waitMs: null },
    ],
    [
      'resumed: a fresh clock, Progressing True again',
      deadline({ pauseOnProgressDeadline: true, paused: false }),
      stuck,
      exceededBefore,
      { actions: [], since: 0, progressing: ['True', 'RollingUpdate'], waitMs: 60_000 },
    ],
    [
      'a new revision clears it: a fresh clock',
      deadline(),
      stuck,
      () => ({
        conditions: [exceededCondition],
        updateRevision: 'web-older',
        rolloutProgress: { revision: 'web-older', updatedAvailableReplicas: 0, lastProgressTime: ago(600) },
      }),
      { since: 0, progressing: ['True', 'RollingUpdate'], waitMs: 60_000 },
    ],
    ['paused by a person: no clock', deadline({ paused: true }), stuck, record(600), { actions: [], since: null, waitMs: null }],
    ['OnDelete: no clock', deadline({}, { updateStrategy: { type: 'OnDelete' } }), stuck, record(600), { since: null, waitMs: null }],
    [
      'every pod above the partition updated and available: nothing to wait for',
      deadline({ partition: 2 }),
      [
        [0, 'ready', 'old'],
        [1, 'ready', 'old'],
        [2, 'ready', 'new'],
      ],
      record(600),
      { actions: [], since: null, waitMs: null, progressing: ['False', 'RolloutComplete'] },
    ],
    [
      'a canary step whose new pod never becomes ready stops itself',
      deadline({ pauseOnProgressDeadline: true, canary: { steps: [{ replicas: 1 }, { pause: {} }] } }),
      stuck,
      (r) => ({ ...record(61)(r), canary: { step: 0 } }),
      { actions: ['pauseRollout', 'event ProgressDeadlineExceeded'], progressing: ['False', 'ProgressDeadlineExceeded'] },
    ],
    [
      'a timed canary pause stops the clock',
      deadline({ canary: { steps: [{ replicas: 1 }, { pause: { duration: '5m' } }] } }),
      [
        [0, 'ready', 'old'],
        [1, 'ready', 'old'],
        [2, 'ready', 'new'],
      ],
      (r) => ({ ...record(600)(r), canary: { step: 1, pausedAt: ago(10) } }),
      { actions: [], since: null, waitMs: 290_000 },
    ],
  ])('%s', (_name, spec, pods, status, want) => {
    check(run(spec, pods, status), want);
  });

  it('the record names the update revision and the count seen', () => {
    const p = run(deadline(), stuck);
    expect(p.status.rolloutProgress).toEqual({ revision: p.status.updateRevision, updatedAvailableReplicas: 0, lastProgressTime: NOW.toISOString() });
  });
});
