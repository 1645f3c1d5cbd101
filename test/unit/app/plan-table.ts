/** Builders for the planner's table tests of reserved ordinals, the specified-delete label and the scale-up limit. */
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { SPECIFIED_DELETE_LABEL } from '../../../src/api/specified-delete.ts';
import { makeApp, podFor, type PodState, stored } from './fixtures.ts';
import type { Action } from '../../../src/workers/app/model/actions.ts';
import type { ControllerRevision, Stored } from '../../../src/kube/types.ts';
import type { Observed } from '../../../src/workers/app/model/plan.ts';
import { planned } from './fixtures.ts';
import { newRevision, revisionData } from '../../../src/workers/app/revisions/revisions.ts';

export const NOW = new Date('2025-06-01T00:00:00Z');
const v = (tag: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } });

function revisionOf(spec: Partial<AppSpec>, n: number): Stored<ControllerRevision> {
  const app = makeApp('web', spec);
  return stored<ControllerRevision>(newRevision(app, revisionData(app), n, 0), `rev-${n}`);
}

/** [ordinal, state, revision, labelled specified-delete] */
export type PodRow = [number, PodState, 'old' | 'new', boolean?];

/** An App at template v2 (update revision) whose current revision is v1. */
export function world(spec: Partial<AppSpec>, pods: PodRow[]): Observed {
  const oldRev = revisionOf({ ...spec, template: v('v1') }, 1);
  const newRev = revisionOf({ ...spec, template: v('v2') }, 2);
  const app = makeApp('web', { ...spec, template: v('v2') });
  app.status = { currentRevision: oldRev.metadata.name, updateRevision: newRev.metadata.name };
  return {
    app,
    pods: pods.map(([o, state, r, labelled]) => {
      const pod = podFor(app, o, (r === 'old' ? oldRev : newRev).metadata.name, state);
      if (labelled) pod.metadata.labels = { ...pod.metadata.labels, [SPECIFIED_DELETE_LABEL]: 'true' };
      return pod;
    }),
    revisions: [oldRev, newRev],
    claims: [],
  };
}

export const summary = (actions: Action[]): string[] =>
  actions.flatMap((a) => {
    switch (a.kind) {
      case 'createPod':
        return [`create ${a.pod.metadata.name}`];
      case 'deletePod':
        return [`delete ${a.name} (${a.cause})`];
      case 'event':
        // The fixtures' rollout completes as a side effect in some rows: not what these tables are about.
        return a.event.reason === 'RolloutComplete' ? [] : [`event ${a.event.reason}`];
      case 'inPlaceStep':
        return [`inPlace ${a.name}`];
      default:
        return [];
    }
  });

export const ordered = { podManagementPolicy: 'OrderedReady' } as const;
export const parallel = { podManagementPolicy: 'Parallel' } as const;
export const rolling = (ru: object) => ({ updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: ru } });
export const ready = (ordinals: number[], r: 'old' | 'new' = 'new'): PodRow[] => ordinals.map((o) => [o, 'ready', r]);
export const progressing = (obs: Observed) => planned(obs, NOW).status.conditions?.find((c) => c.type === 'Progressing');
