import { describe, expect, it } from 'vitest';
import type { Condition } from '../../api/meta.ts';
import type { Action } from './model/actions.ts';
import type { Plan } from './model/plan.ts';
import { MAX_LOG_LINES, MAX_MESSAGE, MAX_NAMES, summarizeApp, summaryLines, type Executed } from './summary.ts';

const NOW = new Date('2026-11-26T22:00:00.000Z');

const createPod = (name: string): Action => ({ kind: 'createPod', pod: { metadata: { name } }, ordinal: 0, revision: 'web-2' }) as Action;
const deletePod = (name: string): Action => ({ kind: 'deletePod', name, uid: 'u', ordinal: 1, cause: 'update', revision: 'web-1' });
const event = (reason: string): Action => ({ kind: 'event', event: { type: 'Normal', reason, action: 'Create', message: 'm' } }) as Action;
const prewarm = (node: string): Action => ({ kind: 'requestPrewarm', node, fieldManager: 'f', label: { key: 'k', value: 'v' }, images: ['a'] });

const condition = (type: string, reason: string, message: string, status: 'True' | 'False' = 'True'): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-11-26T21:00:00Z',
});

function planOf(actions: Action[], conditions: Condition[] = []): Plan {
  return { actions, status: { replicas: 3, currentRevision: 'web-1', updateRevision: 'web-2', conditions } };
}

const all = (plan: Plan, extra: Partial<Executed> = {}): Executed => ({
  performed: plan.actions.filter((a) => a.kind !== 'requestPrewarm').length,
  prewarmFailed: 0,
  ...extra,
});

describe('summarizeApp', () => {
  it('counts the actions taken by kind, with the revision pair, the generation and the wait until when', () => {
    const plan = planOf([createPod('web-0'), createPod('web-1'), deletePod('web-2'), event('SuccessfulCreate'), prewarm('node-a')]);
    const run = all(plan, { wait: { reason: 'canary-pause', afterMs: 30_000 } });
    expect(summarizeApp(plan, 7, run, NOW)).toEqual({
      generation: 7,
      revisions: { current: 'web-1', update: 'web-2' },
      actions: { createPod: 2, deletePod: 1, event: 1, requestPrewarm: 1 },
      wait: { reason: 'canary-pause', afterMs: 30_000, until: '2026-11-26T22:00:30.000Z' },
    });
  });

  it('counts only what was performed when a failure stopped the plan, and skips the pre-warm writes', () => {
    const plan = planOf([createPod('web-0'), createPod('web-1'), deletePod('web-2'), prewarm('node-a')]);
    const summary = summarizeApp(plan, 2, { performed: 1, stoppedAt: 'createPod', prewarmFailed: 0 }, NOW);
    expect(summary.actions).toEqual({ createPod: 1 });
    expect(summary.notPerformed).toEqual({ count: 2, stoppedAt: 'createPod' });
    expect(summaryLines(plan, summary, { performed: 1, stoppedAt: 'createPod', prewarmFailed: 0 })).toEqual([
      'pods: createPod 1 (web-0)',
      'stopped at a failed createPod; 2 planned actions not performed',
    ]);
  });

  it('names a held rollout with its message, and what blocks; an apiserver answer is shown by reason only', () => {
    const secretish = 'admission webhook "x" denied the request: token=abc';
    const plan = planOf(
      [],
      [
        condition('RolloutHeld', 'ReplacementRefused', 'the apiserver would refuse the pods of revision web-2 (Forbidden): policy'),
        condition('Paused', 'PausedBySpec', 'paused by spec.updateStrategy.rollingUpdate.paused'),
        condition('FailedCreatePod', 'CreatePodFailed', secretish),
        condition('LifecycleHookWaiting', 'Waiting', 'no pod waits', 'False'),
      ],
    );
    const summary = summarizeApp(plan, 3, all(plan), NOW);
    expect(summary.held).toEqual({ type: 'RolloutHeld', reason: 'ReplacementRefused' });
    expect(summary.blocked).toEqual([
      { type: 'Paused', reason: 'PausedBySpec', message: 'paused by spec.updateStrategy.rollingUpdate.paused' },
      { type: 'FailedCreatePod', reason: 'CreatePodFailed' },
    ]);
    const lines = summaryLines(plan, summary, all(plan));
    expect(lines[0]).toBe('no writes');
    expect(lines.join('\n')).not.toContain('token=');
    expect(lines).toContain('blocked: FailedCreatePod CreatePodFailed');
  });

  it('reports a pod refused in place as a block, but not a fallback to recreation', () => {
    const refused = planOf([], [condition('InPlaceFallback', 'ResizeRefused', 'pod web-1: cannot decrease memory limits', 'True')]);
    expect(summarizeApp(refused, 1, all(refused), NOW).blocked).toEqual([{ type: 'InPlaceFallback', reason: 'ResizeRefused' }]);
    const fallback = planOf([], [condition('InPlaceFallback', 'InPlaceNotPossible', 'web-1: env changed', 'True')]);
    expect(summarizeApp(fallback, 1, all(fallback), NOW).blocked).toBeUndefined();
  });

  it('reports the progress deadline passed as a block', () => {
    const plan = planOf([], [condition('Progressing', 'ProgressDeadlineExceeded', 'no progress for 600s', 'False')]);
    expect(summarizeApp(plan, 1, all(plan), NOW).blocked).toEqual([
      { type: 'Progressing', reason: 'ProgressDeadlineExceeded', message: 'no progress for 600s' },
    ]);
  });

  it('stays bounded: names capped per line, lines capped, messages cut', () => {
    const pods = Array.from({ length: 40 }, (_, i) => createPod(`web-${i}`));
    const plan = planOf(
      [...pods, event('SuccessfulCreate'), prewarm('n1')],
      [condition('Paused', 'PausedBySpec', 'x'.repeat(5_000)), condition('RolloutHeld', 'ReplacementRefused', 'y'.repeat(5_000))],
    );
    const run = all(plan, { prewarmFailed: 1, wait: { reason: 'min-ready', afterMs: 1_000 } });
    const summary = summarizeApp(plan, 1, run, NOW);
    expect(summary.actions.createPod).toBe(40);
    expect(summary.held?.message).toBeUndefined();
    expect(summary.blocked?.[0]?.message?.length).toBe(MAX_MESSAGE);
    expect(JSON.stringify(summary).length).toBeLessThan(1_000);
    const lines = summaryLines(plan, summary, run);
    expect(lines.length).toBeLessThanOrEqual(MAX_LOG_LINES);
    const podLine = lines.find((l) => l.startsWith('pods:')) ?? '';
    expect(podLine).toBe(
      `pods: createPod 40 (${pods
        .slice(0, MAX_NAMES)
        .map((_, i) => `web-${i}`)
        .join(', ')} and 35 more)`,
    );
    expect(lines).toEqual([
      podLine,
      'events: event 1 (SuccessfulCreate)',
      'pre-warm: requestPrewarm 1 (n1)',
      'pre-warm: 1 ImageList writes failed; tried again later',
      'held: RolloutHeld ReplacementRefused',
      expect.stringMatching(/^blocked: Paused PausedBySpec: x+…$/) as unknown,
      'wait: min-ready until 2026-11-26T22:00:01.000Z',
    ]);
  });
});
