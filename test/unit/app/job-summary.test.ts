/**
 * The App reconciler's summary and job log lines, through the real plan loop and executor on the fake
 * apiserver: what the first reconcile of a new App wrote, and a paused rollout named as the block.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { appReconciler } from '../../../src/workers/app/reconcile.ts';
import type { AppSummary } from '../../../src/workers/app/summary.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';

async function reconcileOnce(s: Scenario) {
  const reconcile = appReconciler(() => s.cluster.client());
  const ctx = { rest: undefined as never, log: pino({ level: 'silent' }), signal: new AbortController().signal, now: s.clock.now };
  const out = await reconcile({ kind: 'App', namespace: NS, name: 'web' }, ctx);
  return { ...out, summary: out.summary as AppSummary | undefined };
}

describe('the App reconcile summary', () => {
  it('counts the revision and the pods created, names them in the log, and gives the revision pair', async () => {
    const s = new Scenario({ replicas: 3, podManagementPolicy: 'Parallel' });
    const { summary, logs } = await reconcileOnce(s);
    const revision = s.app().status?.updateRevision ?? '';
    expect(revision).not.toBe('');
    expect(summary).toMatchObject({ actions: { createRevision: 1, createPod: 3 }, revisions: { current: revision, update: revision } });
    expect(logs).toEqual(expect.arrayContaining([`revisions: createRevision 1 (${revision})`, 'pods: createPod 3 (web-0, web-1, web-2)']));
  });

  it('names a paused rollout as what blocks it', async () => {
    const s = new Scenario({ replicas: 2, podManagementPolicy: 'Parallel' });
    await s.runUntil((x) => x.converged());
    s.edit({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } },
      template: { spec: { containers: [{ name: 'main', image: 'registry.example/web:v2' }] } },
    });
    const { summary, logs } = await reconcileOnce(s);
    expect(summary?.blocked?.[0]).toMatchObject({ type: 'Paused' });
    expect(summary?.revisions.current).not.toBe(summary?.revisions.update);
    expect(logs?.some((l) => l.startsWith('blocked: Paused '))).toBe(true);
  });
});
