import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../kube/types.ts';
import { appSettled } from './settled.ts';

const settled = {
  metadata: { name: 'web', namespace: 'a', generation: 4 },
  spec: { replicas: 3 },
  status: {
    observedGeneration: 4,
    replicas: 3,
    readyReplicas: 3,
    availableReplicas: 3,
    currentReplicas: 3,
    updatedReplicas: 3,
    currentRevision: 'web-abc',
    updateRevision: 'web-abc',
    conditions: [
      { type: 'Progressing', status: 'False', reason: 'RolloutComplete' },
      { type: 'Available', status: 'True' },
    ],
  },
};
type App = typeof settled;
const app = (f: (a: App) => void): KubeObject => {
  const copy = structuredClone(settled);
  f(copy);
  return copy;
};

describe('appSettled', () => {
  it('is true for an App at its desired state, as ebb last observed it', () => {
    expect(appSettled(settled)).toBe(true);
  });

  it('defaults spec.replicas to 1 and reads absent counts as 0', () => {
    expect(appSettled(app((a) => Object.assign(a, { spec: {} })))).toBe(false);
    const zero = app((a) => {
      a.spec.replicas = 0;
      a.status = { ...a.status, replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
    });
    expect(appSettled(zero)).toBe(true);
  });

  it.each<[string, (a: App) => void]>([
    ['no status (or metadata only)', (a) => Object.assign(a, { status: undefined })],
    ['a spec change not yet observed', (a) => (a.metadata.generation = 5)],
    ['being deleted', (a) => Object.assign(a.metadata, { deletionTimestamp: '2026-01-01T00:00:00Z' })],
    ['a pod missing', (a) => (a.status.replicas = 2)],
    ['a pod not ready', (a) => (a.status.readyReplicas = 2)],
    ['a pod not yet available', (a) => (a.status.availableReplicas = 2)],
    ['a pod at the old revision', (a) => (a.status.updatedReplicas = 2)],
    ['a scale-up asked for', (a) => (a.spec.replicas = 4)],
    ['a rollout under way', (a) => (a.status.updateRevision = 'web-def')],
    ['no revision yet', (a) => Object.assign(a.status, { currentRevision: undefined, updateRevision: undefined })],
    ['a pre-warm under way', (a) => Object.assign(a.status, { prewarm: { nodesRequested: 1, nodesPulled: 0, nodesFailed: 0 } })],
    ['Progressing True', (a) => (a.status.conditions[0] = { type: 'Progressing', status: 'True', reason: 'Rolling' })],
    ['RolloutHeld True', (a) => a.status.conditions.push({ type: 'RolloutHeld', status: 'True' })],
    ['InvalidSpec True', (a) => a.status.conditions.push({ type: 'InvalidSpec', status: 'True' })],
    ['FailedCreatePod True', (a) => a.status.conditions.push({ type: 'FailedCreatePod', status: 'True' })],
    ['Paused True', (a) => a.status.conditions.push({ type: 'Paused', status: 'True' })],
  ])('is false with %s', (_what, f) => {
    expect(appSettled(app(f))).toBe(false);
  });

  it('ignores conditions that are False or informational', () => {
    expect(appSettled(app((a) => a.status.conditions.push({ type: 'RolloutHeld', status: 'False' }, { type: 'InPlaceFallback', status: 'True' })))).toBe(true);
  });
});
