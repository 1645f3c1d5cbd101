/** Builders for App reconcile tests: Apps as the apiserver stores them (defaulted) and pods in given states. */
import type { App } from '../../../src/api/app.ts';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { withAppSpecDefaults } from '../../../src/api/defaults.ts';
import { API_VERSION, APP_KIND } from '../../../src/api/group.ts';
import type { KubeObject, Named, Pod, Stored } from '../../../src/kube/types.ts';
import { newPodForOrdinal } from '../../../src/workers/app/pods/builder.ts';
import { plan } from '../../../src/workers/app/planner.ts';
import { needsInput, type Observed, type Plan } from '../../../src/workers/app/model/plan.ts';

export const NS = 'ns';

export function appSpec(name: string, spec: Partial<AppSpec> = {}): AppSpec {
  return withAppSpecDefaults({
    replicas: 3,
    selector: { matchLabels: { app: name } },
    serviceName: name,
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'registry.example/web:v1' }] } },
    ...spec,
  });
}

/** `obj` as the apiserver would return it, with this uid and resourceVersion. */
export function stored<T extends KubeObject>(obj: Named<T>, uid: string, resourceVersion = '1'): Stored<T> {
  return { ...obj, metadata: { ...obj.metadata, uid, resourceVersion } };
}

/** An App as stored (uid, generation, resourceVersion), without status. */
export function makeApp(name = 'web', spec: Partial<AppSpec> = {}, extra: Partial<App['metadata']> = {}): Stored<App> {
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1, resourceVersion: '1', ...extra },
    spec: appSpec(name, spec),
  };
}

export type PodState = 'pending' | 'ready' | 'unready' | 'failed' | 'terminating';

/** A pod of `app` at `ordinal` from revision `revision`, as it would look in `state`. */
export function podFor(app: Stored<App>, ordinal: number, revision: string, state: PodState = 'ready', readySince = '2025-01-01T00:00:00Z'): Stored<Pod> {
  const pod = stored<Pod>(newPodForOrdinal(app, app.spec.template, revision, ordinal), `pod-${ordinal}-${revision}`, '5');
  const phase = state === 'pending' ? 'Pending' : state === 'failed' ? 'Failed' : 'Running';
  const ready = state === 'ready' || state === 'terminating';
  pod.status = { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: readySince }] };
  if (state === 'terminating') pod.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
  return pod;
}

/** `plan()` for a test whose observation holds every input: the plan, or a failure naming what it lacks. */
export function planned(observed: Observed, now: Date): Plan {
  const result = plan(observed, now);
  if (needsInput(result)) throw new Error(`the plan needs the ${result.needs} read first`);
  return result;
}
