import { describe, expect, it } from 'vitest';
import { app, at, cond, imageList, NOW, pod } from '../../../../test/unit/cli/explain-fixtures.ts';
import { explain } from './explain.ts';
import { printExplanation, relative, renderExplanation } from './render.ts';

const until = at(90);
const explanation = explain({
  app: app({
    spec: { imagePrewarm: { enabled: true } },
    status: { prewarm: { nodesRequested: 2, nodesPulled: 1, nodesFailed: 0 } },
    conditions: [cond('Progressing', 'True', 'CanaryStep', 'x'), cond('Paused', 'True', 'CanaryTimedPause', `canary step 2: paused until ${until}`)],
  }),
  pods: [pod(0), pod(1), pod(2, { revision: 'web-b' })],
  imageLists: [
    imageList('node-0', [{ image: 'reg.local/web:2', phase: 'Pulled' }]),
    imageList('node-1', [{ image: 'reg.local/web:2', phase: 'Pulling', attempts: 1 }]),
  ],
  plan: { actions: [], wait: { reason: 'canary-pause', afterMs: 90_000 } },
  queue: {
    timers: [{ reason: 'canary-pause', dueAt: Date.parse(until) }],
    last: {
      jobId: 'App.shop.web.0123456789ab',
      finishedAt: NOW.getTime() - 30_000,
      failed: false,
      returnValue: { result: 'wait', ms: 41, actions: { pauseRollout: 1, event: 1 }, wait: { reason: 'canary-pause', afterMs: 120000, until } },
      logs: ['rollout: pauseRollout 1 (step 1)', `wait: canary-pause until ${until}`],
    },
  },
  notes: [],
  now: NOW,
});

describe('renderExplanation', () => {
  it('absolute: the same App renders the same a few seconds later (a page polled with its ETag), relative times do not', () => {
    const later = (ms: number) =>
      explain({
        app: app({ conditions: [cond('Paused', 'True', 'CanaryTimedPause', `canary step 2: paused until ${until}`)] }),
        pods: [pod(0)],
        imageLists: [],
        plan: undefined,
        queue: undefined,
        notes: [],
        now: new Date(NOW.getTime() + ms),
      });
    const abs = (ms: number) => renderExplanation(later(ms), { tty: false, absolute: true });
    expect(abs(0)).toContain(`(until ${until}, at ${until})`);
    expect(abs(5_000)).toBe(abs(0));
    expect(renderExplanation(later(5_000), { tty: false })).not.toBe(renderExplanation(later(0), { tty: false }));
  });

  it('piped: plain lines, whole, no escape codes; every section in its place', () => {
    const text = renderExplanation(explanation, { tty: false, width: 60 });
    expect(text).not.toContain('\x1b');
    expect(text.split('\n')).toEqual([
      'web: rolling update · updated 1/3 · ready 3/3 · available 3/3 · canary step 2: paused until 2026-03-01T12:01:30.000Z · pre-warm 1/2 nodes',
      'app shop/web · revision web-a → web-b · RollingUpdate, ReCreate · progressing',
      '',
      'WAITING FOR',
      `  paused: canary step 2: paused until ${until} (until ${until}, in 1m30s)`,
      '',
      'PODS',
      '  POD    REVISION  NODE    READY  WAITING FOR',
      '  web-2  update    node-2  yes    -',
      '  web-1  current   node-1  yes    pre-warm on node-1: Pulling, 0/1 images pulled; the rollout is paused (CanaryTimedPause)',
      '  web-0  current   node-0  yes    the rollout is paused (CanaryTimedPause)',
      '',
      'PRE-WARM',
      '  1/2 requested nodes pulled · images reg.local/web:2',
      '  NODE    STATE    PULLED  PODS TO UPDATE  IMAGES',
      '  node-0  Pulled   1/1     web-0           reg.local/web:2 Pulled',
      '  node-1  Pulling  0/1     web-1           reg.local/web:2 Pulling (attempt 1)',
      '',
      'NEXT',
      `  in 1m30s (${until}) timer canary-pause: the canary pause step ends`,
      '',
      'LAST RECONCILE',
      '  30s ago (job App.shop.web.0123456789ab): wait · 41 ms · actions: pauseRollout 1, event 1 · wait canary-pause until 2026-03-01T12:01:30.000Z',
      '    | rollout: pauseRollout 1 (step 1)',
      `    | wait: canary-pause until ${until}`,
      '',
    ]);
  });

  it('on a terminal: bold titles, and no line wider than the terminal', () => {
    const text = renderExplanation(explanation, { tty: true, width: 60 });
    expect(text).toContain('\x1b[1mWAITING FOR\x1b[0m');
    expect(text).toContain('\x1b[1mLAST RECONCILE\x1b[0m');
    const lines = text.trimEnd().split('\n');
    for (const l of lines) expect(l.replaceAll('\x1b[1m', '').replaceAll('\x1b[0m', '').length).toBeLessThanOrEqual(59);
    expect(lines.some((l) => l.endsWith('…'))).toBe(true);
  });

  it('a complete rollout says so, and a missing source is a note', () => {
    const done = explain({
      app: app({ status: { updatedReplicas: 3, currentRevision: 'web-b' }, conditions: [cond('Progressing', 'False', 'RolloutComplete')] }),
      pods: [0, 1, 2].map((i) => pod(i, { revision: 'web-b' })),
      imageLists: [],
      plan: { actions: [] },
      queue: undefined,
      notes: ['the queues were not read (Redis at 127.0.0.1:6379 (EBB_REDIS_URL): connect ECONNREFUSED)'],
      now: NOW,
    });
    const text = renderExplanation(done, { tty: false });
    expect(text).toContain('WAITING FOR\n  nothing: the rollout is complete\n');
    expect(text).toContain('NEXT\n  nothing planned: ebb acts on the next change\n');
    expect(text).toContain('NOTES\n  the queues were not read (Redis at 127.0.0.1:6379 (EBB_REDIS_URL): connect ECONNREFUSED)\n');
    expect(text).not.toContain('LAST RECONCILE');
  });
});

describe('printExplanation', () => {
  // Text anyone with write access to the App, its pods or its queue writes: ESC sequences, a C1 CSI, BEL, bidi.
  const evil = '\x1b]0;owned\x07held\x1b[2J\x1b[1A\x9b2K by\u202e hook';
  const hostile = explain({
    app: app({ conditions: [cond('Progressing', 'True', 'Hook\x1b[8m', evil)] }),
    pods: [pod(0), pod(1, { revision: 'web-b' })],
    imageLists: [imageList('node-0', [{ image: 'reg.local/web:2', phase: 'Failed', message: evil }])],
    plan: { actions: [] },
    queue: {
      timers: [],
      last: { jobId: 'App.shop.web.1', finishedAt: NOW.getTime() - 1_000, failed: true, failedReason: evil, returnValue: { [evil]: evil }, logs: [evil] },
    },
    notes: [evil],
    now: NOW,
  });
  // eslint-disable-next-line no-control-regex
  const UNSAFE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

  it('prints cluster and queue text without escape sequences or control characters: piped, on a terminal, as JSON', () => {
    const piped = printExplanation(hostile, { json: false, tty: false });
    expect(piped).toContain('held by hook');
    expect(piped).not.toMatch(UNSAFE);
    // On a terminal the renderer's own bold titles are the only escapes.
    const tty = printExplanation(hostile, { json: false, tty: true, width: 200 });
    expect(tty).toContain('\x1b[1mWAITING FOR\x1b[0m');
    expect(tty.replaceAll('\x1b[1m', '').replaceAll('\x1b[0m', '')).not.toMatch(UNSAFE);
    const json = printExplanation(hostile, { json: true, tty: false });
    expect(json).not.toMatch(UNSAFE);
    expect(json).not.toContain('\\u001b');
    expect(JSON.stringify(JSON.parse(json))).toContain('held by hook');
  });
});

describe('relative', () => {
  it.each([
    [0, 'now'],
    [5_000, 'in 5s'],
    [-65_000, '1m05s ago'],
    [3_720_000, 'in 1h02m'],
  ])('%d ms → %s', (ms, text) => {
    expect(relative(NOW.getTime() + ms, NOW)).toBe(text);
  });
});
