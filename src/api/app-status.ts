/** `App.status`: the StatefulSetStatus fields plus canary progress and ebb's conditions. */
import { Type, type Static } from '@sinclair/typebox';
import { conditionList } from './meta.ts';
import { dateTime, int32, int64 } from './schema-kit.ts';
import { RolloutProgressSchema } from './progress-deadline.ts';
import { AbortStatusSchema } from './rollout-abort.ts';
import { AnalysisStatusSchema } from './analysis.ts';
import { AnalysisHistorySchema } from './analysis-history.ts';

const count = (description: string) => Type.Optional(int32({ description, minimum: 0 }));

export const CanaryStatusSchema = Type.Object(
  {
    step: Type.Optional(int32({ description: 'Index of the current canary step; equal to the number of steps once all are done.', minimum: 0 })),
    pausedAt: Type.Optional(dateTime({ description: 'When the current pause step began.' })),
  },
  { description: 'Progress through spec.updateStrategy.rollingUpdate.canary.steps for the update revision.' },
);
export type CanaryStatus = Static<typeof CanaryStatusSchema>;

export const PrewarmStatusSchema = Type.Object(
  {
    nodesRequested: int32({ description: 'Nodes whose ImageList lists the images of the update revision for this App.', minimum: 0 }),
    nodesPulled: int32({ description: 'Of those, nodes whose daemon reports every image pulled.', minimum: 0 }),
    nodesFailed: int32({ description: 'Of those, nodes whose daemon reports a failed pull (the rollout goes on regardless).', minimum: 0 }),
    lookahead: Type.Optional(
      int32({
        description:
          'How many of the next pods get their node pre-warmed now: spec.imagePrewarm.lookahead, else measured from pull times and the rollout pace. Absent: every pod left to update (nothing measured yet, or the rollout waits).',
        minimum: 1,
      }),
    ),
    podsOnWarmNodes: Type.Optional(
      int32({
        description:
          "Pods of the update revision created on a node after this App's pre-warm pull there had finished (a recreated or new pod that kube-scheduler placed on a warm node). Pods updated in place are not counted. Absent: none.",
        minimum: 0,
      }),
    ),
  },
  {
    description: 'Image pre-warming in progress (spec.imagePrewarm: a rollout, a scale-up, a warm pool); absent while no ImageList holds entries of this App.',
  },
);
export type PrewarmStatus = Static<typeof PrewarmStatusSchema>;

export const AppStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(int64({ description: 'The .metadata.generation this status was computed from.', minimum: 0 })),
    replicas: count('Pods the App owns (any revision, any state).'),
    readyReplicas: count('Pods with a Ready condition.'),
    availableReplicas: count('Pods ready for at least minReadySeconds.'),
    currentReplicas: count('Pods at currentRevision.'),
    updatedReplicas: count('Pods at updateRevision.'),
    updatedReadyReplicas: count('Ready pods at updateRevision.'),
    currentRevision: Type.Optional(Type.String({ description: 'Revision of the pods before the update in progress.' })),
    updateRevision: Type.Optional(Type.String({ description: 'Revision of the current template.' })),
    collisionCount: Type.Optional(int32({ description: 'Counts hash collisions of revision names, to make a new name.', minimum: 0 })),
    revisionCount: Type.Optional(
      int32({
        description: 'At most this many ControllerRevisions belong to the App: those found when they were last read, plus those created or adopted since.',
        minimum: 0,
      }),
    ),
    labelSelector: Type.Optional(Type.String({ description: 'spec.selector as a string, for the scale subresource (HPA).' })),
    canary: Type.Optional(CanaryStatusSchema),
    prewarm: Type.Optional(PrewarmStatusSchema),
    rolloutProgress: Type.Optional(RolloutProgressSchema),
    abort: Type.Optional(AbortStatusSchema),
    analysis: Type.Optional(AnalysisStatusSchema),
    analysisHistory: Type.Optional(AnalysisHistorySchema),
    expansionRefusedClaim: Type.Optional(
      Type.String({ description: 'The claim whose expansion the apiserver refused, while the VolumeExpansionRefused condition is True.' }),
    ),
    conditions: Type.Optional(conditionList('Latest observations of the state of the App.')),
  },
  { description: 'Observed state of the App, written by ebb.' },
);
export type AppStatus = Static<typeof AppStatusSchema>;
