/**
 * Progress lives on the pod: a worker that dies between any two steps — before its write, or after it without
 * seeing the answer (and a stale worker then repeating it) — leaves a pod any other worker moves on to the same
 * end state. Also: an update superseded by a newer revision mid-way, and the gate of a new pod.
 */
import { describe, expect, it } from 'vitest';
import { Annotation, Label, Reason } from '../../../src/api/keys.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { applyInPlaceStep, markGateReady } from '../../../src/workers/inplace/executor.ts';
import { needsGateReady } from '../../../src/workers/inplace/gate.ts';
import { nextInPlaceStep } from '../../../src/workers/inplace/step.ts';
import { EMPTY_PLAN } from '../../../src/workers/inplace/types.ts';
import { drive, env, gate, image, newPod, status, target, type Env } from './scenario.ts';

const containers = () => [
  { name: 'app', image: 'app:1' },
  { name: 'proxy', image: 'proxy:1' },
];
const priorities = { 'apps.ebb.dev/container-priority': '{"proxy": 1}' };
const B = target(
  'web-b',
  {
    images: [
      { container: 'app', image: 'app:2' },
      { container: 'proxy', image: 'proxy:2' },
    ],
    metadata: { labels: { v: '2' }, annotations: {} },
  },
  1,
);

function expectConverged(e: Env): void {
  const pod = e.api.read();
  expect(pod.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
  expect(gate(pod)).toMatchObject({ status: 'True', reason: Reason.inPlaceUpdateDone });
  expect(pod.metadata.labels).toMatchObject({ [Label.revision]: 'web-b', v: '2' });
  expect([image(pod, 'app'), image(pod, 'proxy')]).toEqual(['app:2', 'proxy:2']);
  expect([status(pod, 'app')?.restartCount, status(pod, 'proxy')?.restartCount]).toEqual([1, 1]);
}

/** Writes of an undisturbed run: start, two batches, the gate's early release, finish. */
const WRITES = 5;

describe('crash between steps', () => {
  it.each(Array.from({ length: WRITES }, (_, k) => k))('a worker dies before write %i: the next one redoes it', async (k) => {
    const e = env(newPod(containers(), priorities));
    let seen = 0;
    let lost: string | undefined;
    const run = await drive(e, B, {
      beforeApply: (_i, _pod, step) => {
        if (seen++ !== k) return undefined;
        lost = step.kind;
        return 'skip';
      },
    });
    expect(run.steps.at(-1)?.kind).toBe('done');
    expect(run.writes).toHaveLength(WRITES);
    // The step lost is exactly the one computed again next.
    expect(run.writes[k]?.kind).toBe(lost);
    expectConverged(e);
  });

  it.each(Array.from({ length: WRITES }, (_, k) => k))('a worker dies after write %i: a stale repeat of it is refused with 409', async (k) => {
    const e = env(newPod(containers(), priorities));
    let seen = 0;
    let conflicts = 0;
    const run = await drive(e, B, {
      afterApply: async (_i, before, step) => {
        if (seen++ !== k) return;
        // Another worker that read the pod before this write repeats the same step.
        await applyInPlaceStep(e.api, before, step).catch((err: unknown) => {
          if (!isKubeError(err, 'Conflict')) throw err;
          conflicts++;
        });
      },
    });
    expect(conflicts).toBe(1);
    expect(run.writes).toHaveLength(WRITES);
    expectConverged(e);
  });

  it('resumes from the pod alone at every point: a fresh step function on each read agrees with the run', async () => {
    const e = env(newPod(containers(), priorities));
    const run = await drive(e, B, {
      beforeApply: (_i, pod, step) => {
        // Recomputed "by another worker" from the same read and time: the same step.
        expect(nextInPlaceStep(structuredClone(pod), B, e.clock.now())).toEqual(step);
        return undefined;
      },
    });
    expect(run.steps.at(-1)?.kind).toBe('done');
  });
});

describe('superseded update', () => {
  it('abandons an update to B after its first batch and reaches C, reverting what C does not change', async () => {
    const e = env(newPod(containers(), priorities));
    // B changes both images; after proxy (batch 0) is patched and ready, C arrives: diffed from the pod's
    // revision label (still web-a), C changes only app.
    let batches = 0;
    await drive(e, B, { beforeApply: (_i, _pod, step) => (step.kind === 'patchSpec' && ++batches === 2 ? 'stop' : undefined), maxIterations: 40 });
    expect(image(e.api.read(), 'proxy')).toBe('proxy:2');
    expect(e.api.read().metadata.labels?.[Label.revision]).toBe('web-a');

    const C = target('web-c', { images: [{ container: 'app', image: 'app:3' }] });
    const run = await drive(e, C);
    const pod = e.api.read();
    expect([image(pod, 'app'), image(pod, 'proxy')]).toEqual(['app:3', 'proxy:1']);
    expect(pod.metadata.labels?.[Label.revision]).toBe('web-c');
    expect(pod.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
    expect(gate(pod)?.status).toBe('True');
    // The gate never went back to True in between but by the early release of C's last batch (the kubelet had
    // observed it), and the grace period was not charged twice.
    const released = run.timeline.findIndex((s) => s.gate === 'True');
    expect(run.timeline.slice(0, released).every((s) => s.gate === 'False')).toBe(true);
    expect(run.writes.filter((w) => w.kind === 'gate')).toHaveLength(1);
    expect(run.timeline.slice(released).every((s) => s.gate === 'True' && s.images.app === 'app:3')).toBe(true);
    expect(run.steps.some((s) => s.kind === 'wait')).toBe(false);
  });

  it('reverts a half-done update when the App rolls back to the revision the pod still carries', async () => {
    const e = env(newPod(containers(), priorities));
    let batches = 0;
    await drive(e, B, { beforeApply: (_i, _pod, step) => (step.kind === 'patchSpec' && ++batches === 2 ? 'stop' : undefined), maxIterations: 40 });
    expect(image(e.api.read(), 'proxy')).toBe('proxy:2');

    // The pod's label is still web-a, the update revision again web-a: the planner drives it with the empty plan.
    await drive(e, { revision: 'web-a', plan: EMPTY_PLAN, gracePeriodSeconds: 1 });
    const pod = e.api.read();
    expect([image(pod, 'app'), image(pod, 'proxy')]).toEqual(['app:1', 'proxy:1']);
    expect(pod.metadata.annotations?.[Annotation.inPlaceUpdateState]).toBeUndefined();
    expect(gate(pod)?.status).toBe('True');
  });

  it('finishes an update whose last batch is patched when the planner passes the empty plan', async () => {
    const e = env(newPod([{ name: 'app', image: 'app:1' }]));
    await drive(e, target('web-b', { images: [{ container: 'app', image: 'app:2' }] }), { maxIterations: 3 });
    expect(e.api.read().metadata.labels?.[Label.revision]).toBe('web-b');
    const run = await drive(e, { revision: 'web-b', plan: EMPTY_PLAN, gracePeriodSeconds: 0 });
    expect(run.steps.at(-1)?.kind).toBe('done');
    expect(gate(e.api.read())?.status).toBe('True');
  });
});

describe('gate of a new pod', () => {
  it('is set True with reason PodCreated, once', async () => {
    const pod = newPod([{ name: 'app', image: 'app:1' }]);
    delete pod.status;
    const e = env(pod);
    expect(needsGateReady(e.api.read())).toBe(true);
    await markGateReady(e.api, e.api.read(), e.clock.now());
    expect(gate(e.api.read())).toMatchObject({ status: 'True', reason: Reason.podCreated });
    expect(needsGateReady(e.api.read())).toBe(false);
  });

  it('is set by the step function too when the pod already runs the target revision', () => {
    const pod = newPod([{ name: 'app', image: 'app:1' }]);
    delete pod.status;
    expect(nextInPlaceStep(pod, target('web-a', {}), new Date())).toMatchObject({
      kind: 'finish',
      removeAnnotation: false,
      condition: { status: 'True', reason: Reason.podCreated },
    });
  });

  it('is not set from a stale read once an update started', async () => {
    const e = env(newPod([{ name: 'app', image: 'app:1' }]));
    const stale = e.api.read();
    await drive(e, target('web-b', { images: [{ container: 'app', image: 'app:2' }] }), { maxIterations: 2 });
    await expect(markGateReady(e.api, stale, e.clock.now())).rejects.toMatchObject({ code: 'Conflict' });
    expect(gate(e.api.read())?.status).toBe('False');
  });
});
