import { describe, expect, it } from 'vitest';
import { MeasurementPhase, type AnalysisCheck, type Measurement } from '../../../api/analysis.ts';
import { NS } from '../../../../test/unit/app/fixtures.ts';
import { Scenario } from '../../../../test/unit/app/scenario.ts';
import { readOnlyDesk } from '../../../workers/measure/desk.ts';
import { readForExplain, readOnly, ReadOnlyError } from './read.ts';

const errors: AnalysisCheck = { name: 'errors', interval: '10s', count: 3, web: { url: 'http://checks.example/errors', successCondition: '$.ok == true' } };
const image = (ref: string) => ({ template: { spec: { containers: [{ name: 'main', image: ref }] } } });

/** An App of 3 whose canary's analysis step has recorded a run of web check `errors`, and when its next measurement is due. */
async function measuring(): Promise<{ s: Scenario; due: Date }> {
  const steps = [{ replicas: 1 }, { analysis: ['errors'] }, { replicas: '100%' }];
  const s = new Scenario({
    replicas: 3,
    podManagementPolicy: 'Parallel',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps }, analysis: { checks: [errors] } } },
  });
  await s.runUntil((x) => x.converged());
  s.edit(image('registry.example/web:v2'));
  await s.runUntil((x) => x.app().status?.analysis?.runs[0]?.nextMeasurementAt !== undefined, 40);
  const next = s.app().status?.analysis?.runs[0]?.nextMeasurementAt ?? '';
  return { s, due: new Date(Date.parse(next) + 1_000) };
}

describe("explain's plan", () => {
  it('a due measurement: the plan loop reads its finished result and plans with it; nothing is measured, asked for or written', async () => {
    const { s, due } = await measuring();
    const asked: string[][] = [];
    const failed: Measurement = { phase: MeasurementPhase.failed, value: 'false', measuredAt: due.toISOString() };
    const desk = readOnlyDesk({
      read: (ids) => {
        asked.push([...ids]);
        return Promise.resolve(ids.map(() => failed));
      },
    });
    const writes = s.cluster.calls.count('pods.delete') + s.cluster.calls.count('apps.patchStatus');
    const reads = await readForExplain(readOnly(s.cluster.client(), desk), NS, 'web', due);
    expect(reads.notes).toEqual([]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toHaveLength(1);
    // The failed measurement, judged: the analysis aborts the rollout, and the plan says so.
    expect(reads.plan?.actions.some((a) => a.kind === 'event' && a.event.reason === 'RolloutAborted')).toBe(true);
    expect(s.cluster.calls.count('pods.delete') + s.cluster.calls.count('apps.patchStatus')).toBe(writes);
  });

  it('a due measurement not finished is pending: the plan waits for it', async () => {
    const { s, due } = await measuring();
    const desk = readOnlyDesk({ read: (ids) => Promise.resolve(ids.map(() => undefined)) });
    const reads = await readForExplain(readOnly(s.cluster.client(), desk), NS, 'web', due);
    expect(reads.notes).toEqual([]);
    expect(reads.plan?.wait?.reason).toBe('analysis');
  });

  it('the read-only client refuses every write with a typed error', async () => {
    const { s } = await measuring();
    const client = readOnly(s.cluster.client());
    await expect(client.pods.delete(NS, 'web-0', undefined)).rejects.toBeInstanceOf(ReadOnlyError);
    await expect(client.apps.patchStatus(NS, 'web', {})).rejects.toMatchObject({ code: 'ReadOnly' });
  });
});
