/**
 * Scenario test of the analysis history: the outcome of each rollout outlives the next one. A healthy
 * revision completes, the next crash-loops and is aborted by its check, a third rolls out: the history keeps
 * the first two revisions' outcomes and checks, the record holds the third's.
 */
import { describe, expect, it } from 'vitest';
import { AnalysisPhase, type AnalysisCheck } from '../../../src/api/analysis.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { Scenario } from './scenario.ts';

const image = (ref: string) => ({ template: { spec: { containers: [{ name: 'main', image: ref }] } } });
const health: AnalysisCheck = { name: 'health', interval: '3s', count: 2, podHealth: { maxNotReadySeconds: 5 } };
const steps: CanaryStep[] = [{ replicas: 1 }, { analysis: ['health'] }, { replicas: '100%' }];
const spec: Partial<AppSpec> = {
  replicas: 4,
  podManagementPolicy: 'Parallel',
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, canary: { steps }, analysis: { checks: [health] } } },
};

describe('the analysis history', () => {
  it("keeps each earlier revision's outcome and checks when the next rollout starts measuring", async () => {
    const s = new Scenario(spec, { neverReady: /crashloop/ });
    await s.runUntil((x) => x.converged());
    const v1 = s.app().status!.updateRevision!;
    s.arm({ maxUnavailable: 1 });

    s.edit(image('registry.example/web:v2'));
    await s.runUntil((x) => x.app().status?.updateRevision !== v1 && x.converged(), 80);
    const v2 = s.app().status!.updateRevision!;
    expect(s.app().status?.analysis).toMatchObject({ revision: v2, runs: [{ phase: AnalysisPhase.successful }] });
    expect(s.app().status?.analysisHistory).toBeUndefined();

    s.edit(image('registry.example/crashloop:v3'));
    await s.runUntil((x) => x.app().status?.abort !== undefined, 60);
    const v3 = s.app().status!.updateRevision!;
    // The record moved on to v3: v2's outcome is kept.
    expect(s.app().status?.analysis?.revision).toBe(v3);
    expect(s.app().status?.analysisHistory).toEqual([
      {
        revision: v2,
        outcome: 'Successful',
        finishedAt: expect.any(String) as string,
        checks: [expect.objectContaining({ name: 'health', step: 1, phase: AnalysisPhase.successful, successful: 2, failed: 0 })],
      },
    ]);
    await s.runUntil((x) => x.pods().every((p) => p.metadata.labels?.['controller-revision-hash'] === v2), 60);

    s.edit(image('registry.example/web:v4'));
    await s.runUntil((x) => x.app().status?.updateRevision !== v3 && x.converged(), 80);
    const v4 = s.app().status!.updateRevision!;
    expect(s.app().status?.analysis?.revision).toBe(v4);
    const history = s.app().status?.analysisHistory ?? [];
    expect(history.map((e) => [e.revision, e.outcome])).toEqual([
      [v2, 'Successful'],
      [v3, 'Failed'],
    ]);
    expect(history[1]?.checks[0]).toMatchObject({ name: 'health', phase: AnalysisPhase.failed, failed: 1 });
    expect(history[1]?.checks[0]?.message).toMatch(/not ready for \d+s \(limit 5s\)/);
    expect(s.violations).toEqual([]);
  });
});
