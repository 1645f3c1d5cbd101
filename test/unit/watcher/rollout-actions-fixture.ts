/** An App as the rollouts page's action tests use it. */
import type { App } from '../../../src/api/app.ts';

/** An App rolling from revision `r1` to `r2`. */
export function rolling(over: { paused?: boolean; annotations?: Record<string, string>; abort?: boolean; rv?: string } = {}): App {
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1', resourceVersion: over.rv ?? '5', generation: 2, annotations: over.annotations ?? {} },
    spec: { updateStrategy: { rollingUpdate: { paused: over.paused ?? false } }, template: {} },
    status: {
      observedGeneration: 2,
      currentRevision: 'r1',
      updateRevision: 'r2',
      ...(over.abort ? { abort: { revision: 'r2', abortedAt: '2026-01-01T00:00:00Z' } } : {}),
    },
  } as unknown as App;
}
