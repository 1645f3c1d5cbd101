/**
 * podHealth under in-place updates, on the sandbox with the real watcher and worker. An in-place update restarts
 * every container whose image changes (restartCount +1 each, and the counts from before stay): the check counts
 * only the restarts since the pod reached the update revision, so a healthy in-place rollout of a pod with three
 * containers completes, while a pod that crash-loops after its update still fails it.
 *
 * The sandbox's kubelet crash-loops images whose repository starts with `crashloop`.
 */
import { describe, expect, it } from 'vitest';
import { AnalysisPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { Annotation } from '../../../src/api/keys.ts';
import { AbortReason } from '../../../src/api/rollout-abort.ts';
import { createApp, image, patchApp, revisionOf, settled, uniqueName, until, useController } from './harness.ts';

const ctl = useController('an-ip');
const health: AnalysisCheck = { name: 'health', interval: '2s', count: 3, podHealth: {} };
const CRASHING = 'registry.example.com/team/crashloop:v2';

const three = (name: string, images: [string, string, string]): AppSpec['template'] => ({
  metadata: { labels: { app: name } },
  spec: { containers: images.map((ref, i) => ({ name: `c${i}`, image: ref })), terminationGracePeriodSeconds: 1 },
});

async function inPlaceApp(prefix: string): Promise<{ name: string; v1: string }> {
  const name = uniqueName(prefix);
  await createApp(ctl.ns, name, {
    replicas: 2,
    podManagementPolicy: 'Parallel',
    template: three(name, [image('v1'), image('v1'), image('v1')]),
    updateStrategy: {
      type: 'RollingUpdate',
      rollingUpdate: {
        podUpdatePolicy: 'InPlaceIfPossible',
        canary: { steps: [{ replicas: 1 }, { analysis: ['health'] }, { replicas: '100%' }] },
        analysis: { checks: [health] },
      },
    },
  });
  const stable = await settled(ctl.ns, name, undefined, 90_000);
  return { name, v1: stable.app.status?.updateRevision ?? '' };
}

const restartsOf = (p: { status?: Record<string, unknown> | undefined }): number =>
  ((p.status?.['containerStatuses'] ?? []) as { restartCount?: number }[]).reduce((sum, c) => sum + (c.restartCount ?? 0), 0);

describe('podHealth with in-place updates', () => {
  it('three containers changing image in place: the in-place restarts are not counted, the rollout completes', async () => {
    const { name, v1 } = await inPlaceApp('an-ip-ok');
    await patchApp(ctl.ns, name, { template: three(name, [image('v2'), image('v2'), image('v2')]) });
    const done = await until(
      ctl.ns,
      name,
      (s) => s.app.status?.abort !== undefined || (s.app.status?.canary?.step === 3 && s.app.status.updateRevision !== v1),
      {
        timeoutMs: 120_000,
        what: `App ${name} past its analysis step`,
      },
    );
    expect(done.app.status?.abort).toBeUndefined();
    const v2 = done.app.status?.updateRevision ?? '';
    const finished = await settled(ctl.ns, name, v2, 120_000);
    expect(finished.app.status?.abort).toBeUndefined();
    expect(finished.app.status?.analysis?.runs[0]).toMatchObject({ name: 'health', phase: AnalysisPhase.successful, failed: 0 });
    // Each pod took three restarts (one per container) and carries the baseline of its revision.
    for (const p of finished.pods) {
      expect(revisionOf(p)).toBe(v2);
      expect(restartsOf(p)).toBeGreaterThanOrEqual(3);
      expect(JSON.parse(p.metadata.annotations?.[Annotation.restartBaseline] ?? '{}')).toMatchObject({ revision: v2 });
      expect(p.metadata.labels?.['controller-revision-hash']).toBe(v2);
    }
  });

  it('a pod that crash-loops after its in-place update still fails the check', async () => {
    const { name } = await inPlaceApp('an-ip-bad');
    await patchApp(ctl.ns, name, { template: three(name, [image('v2'), CRASHING, image('v2')]) });
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, { timeoutMs: 120_000, what: `App ${name} aborted` });
    expect(aborted.app.status?.abort).toMatchObject({ reason: AbortReason.analysisFailed, measurement: { analysis: 'health' } });
    expect(aborted.app.status?.abort?.measurement?.condition).toMatch(/^pod .*-1: /);
  });
});
