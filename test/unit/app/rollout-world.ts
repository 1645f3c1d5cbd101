/** An App mid-rollout (template v1 → v2) for planner table tests: pods by ordinal, state, revision and labels. */
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { AppStatus } from '../../../src/api/app-status.ts';
import type { ControllerRevision, Stored } from '../../../src/kube/types.ts';
import type { Action } from '../../../src/workers/app/model/actions.ts';
import type { Observed } from '../../../src/workers/app/model/plan.ts';
import { newRevision, revisionData } from '../../../src/workers/app/revisions/revisions.ts';
import { makeApp, podFor, type PodState, stored } from './fixtures.ts';

export const template = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });

function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  const app = makeApp('web', spec);
  return stored<ControllerRevision>(newRevision(app, revisionData(app), n, 0), `rev-${n}`);
}

/** [ordinal, state, revision, extra labels, readySince] */
export type PodRow = [number, PodState, 'old' | 'new', Record<string, string>?, string?];

/** An App at template v2 whose pods are at `old` (v1) or `new` (v2) revisions, with `status` merged in. */
export function rolloutWorld(spec: Partial<AppSpec>, pods: PodRow[], status: Partial<AppStatus> = {}): Observed {
  const oldRev = revisionOf({ ...spec, template: template('v1') }, 1);
  const newRev = revisionOf({ ...spec, template: template('v2') }, 2);
  const app = makeApp('web', { ...spec, template: template('v2') });
  app.status = { currentRevision: oldRev.metadata.name, updateRevision: newRev.metadata.name, ...status };
  return {
    app,
    pods: pods.map(([o, state, r, labels, readySince]) => {
      const pod = podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name, state, readySince);
      pod.metadata.labels = { ...pod.metadata.labels, ...labels };
      return pod;
    }),
    revisions: [oldRev, newRev],
    claims: [],
  };
}

/** Actions as short strings: `create web-0 (update)`, `delete web-1 (update)`, `event Reason`, or the kind. */
export const summary = (actions: readonly Action[], update?: string): string[] =>
  actions.map((a) => {
    switch (a.kind) {
      case 'createPod':
        return `create ${a.pod.metadata.name} (${a.revision === update ? 'update' : 'current'})`;
      case 'deletePod':
        return `delete ${a.name} (${a.cause})`;
      case 'event':
        return `event ${a.event.reason}`;
      default:
        return a.kind;
    }
  });

export const parallel = { podManagementPolicy: 'Parallel' } as const;
export const rolling = (ru: object) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: ru } });
