/** `App.spec`: a superset of apps/v1 StatefulSetSpec, so a StatefulSet becomes an App by changing apiVersion/kind. */
import { Type, type Static } from '@sinclair/typebox';
import { labelSelector } from './meta.ts';
import { PodTemplateSpecSchema, volumeClaimTemplates } from './pod-template.ts';
import { DNS_LABEL_MAX_LENGTH, dnsLabel, int32, LABEL_VALUE_PATTERN, labelKeysRule, stringEnum, stringMap } from './schema-kit.ts';
import { UpdateStrategySchema } from './update-strategy.ts';
import { LifecycleSchema } from './lifecycle.ts';
import { VolumeClaimUpdateStrategySchema } from './volume-claim-update.ts';
import { selectorMatchesTemplateRules, immutableSpecRules, ordinalRangeRules } from './app-rules.ts';
import { ReserveOrdinalsSchema } from './reserve-ordinals.ts';
import { ScaleStrategySchema, scaleStrategyRules } from './scale-strategy.ts';
import { specifiedDeleteRules } from './specified-delete.ts';
import { priorityRules } from './priority.ts';
import { progressDeadlineRules, progressDeadlineSeconds } from './progress-deadline.ts';
import { rollbackOnDeadlineRules } from './rollout-abort.ts';

export const DEFAULT_REPLICAS = 1;
/**
 * The most pods one App may ask for. A plan holds one action (with its pod) per missing replica and walks the
 * ordinal range, so an unbounded int32 (2^31 - 1) would exhaust a worker's memory on every attempt.
 */
export const MAX_REPLICAS = 10_000;
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;
/** Each kept revision holds a whole pod template, and the worker reads an App's revisions on every reconcile. */
export const MAX_REVISION_HISTORY_LIMIT = 100;
/** The most labels a warm pool's node selector may name. */
export const WARM_POOL_MAX_LABELS = 16;

export const PodManagementPolicy = { orderedReady: 'OrderedReady', parallel: 'Parallel' } as const;
export const RetentionPolicy = { retain: 'Retain', delete: 'Delete' } as const;

const retention = (description: string) =>
  Type.Optional(stringEnum([RetentionPolicy.retain, RetentionPolicy.delete], { description, default: RetentionPolicy.retain }));

export const ImagePrewarmSchema = Type.Object(
  {
    enabled: Type.Boolean({
      description: 'Pull the images of the next revision on the nodes of the pods about to be updated, and on the nodes a scale-up may place pods on.',
    }),
    parallelism: Type.Optional(
      int32({
        description: "At most this many nodes pre-warmed at a time. Unset: as many as the cluster's pre-warm pull budget has room for.",
        minimum: 1,
      }),
    ),
    lookahead: Type.Optional(
      int32({
        description:
          'How many of the next pods to be updated get their node pre-warmed. Unset: measured, so that each pull is expected to end before the rollout reaches its node.',
        minimum: 1,
      }),
    ),
    nodeSelector: Type.Optional(
      stringMap(
        {
          description:
            "A warm pool: every node whose labels include all of these keeps the App's images (of the template in force) pulled, nodes that join later included, for as long as this is set. Empty: no pool.",
          maxProperties: WARM_POOL_MAX_LABELS,
          'x-kubernetes-validations': [labelKeysRule],
        },
        Type.String({ maxLength: DNS_LABEL_MAX_LENGTH, pattern: LABEL_VALUE_PATTERN }),
      ),
    ),
  },
  {
    description: 'Image pre-warming through the ImageLists of nodes: during a rolling update, for a scale-up, and on a warm pool of nodes.',
    'x-kubernetes-validations': [
      { rule: '!has(self.nodeSelector) || size(self.nodeSelector) == 0 || self.enabled', message: 'a warm pool (nodeSelector) needs enabled: true' },
    ],
  },
);
export type ImagePrewarm = Static<typeof ImagePrewarmSchema>;

export const AppSpecSchema = Type.Object(
  {
    replicas: Type.Optional(int32({ description: 'Desired number of pods.', minimum: 0, maximum: MAX_REPLICAS, default: DEFAULT_REPLICAS })),
    selector: labelSelector({
      description: 'Selects the pods of the App; must match template labels and must not be empty. Immutable.',
      'x-kubernetes-validations': [
        {
          rule: '(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)',
          message: 'selector must not be empty: set matchLabels or matchExpressions',
        },
        { rule: 'self == oldSelf', message: 'selector is immutable' },
      ],
    }),
    template: PodTemplateSpecSchema,
    serviceName: Type.Optional(dnsLabel('Headless Service that gives pods their DNS names (<pod>.<serviceName>). Immutable.')),
    podManagementPolicy: Type.Optional(
      stringEnum([PodManagementPolicy.orderedReady, PodManagementPolicy.parallel], {
        description: 'OrderedReady creates pods one at a time in ordinal order and deletes in reverse; Parallel does not wait. Immutable.',
        default: PodManagementPolicy.orderedReady,
        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'podManagementPolicy is immutable' }],
      }),
    ),
    ordinals: Type.Optional(
      Type.Object(
        { start: Type.Optional(int32({ description: 'The first ordinal; pods are numbered start..start+replicas-1.', minimum: 0, default: 0 })) },
        { description: 'Ordinal numbering of pods.' },
      ),
    ),
    minReadySeconds: Type.Optional(int32({ description: 'Seconds a pod must be ready before it counts as available.', minimum: 0, default: 0 })),
    revisionHistoryLimit: Type.Optional(
      int32({
        description: `How many old ControllerRevisions to keep, at most ${MAX_REVISION_HISTORY_LIMIT}.`,
        minimum: 0,
        maximum: MAX_REVISION_HISTORY_LIMIT,
        default: DEFAULT_REVISION_HISTORY_LIMIT,
      }),
    ),
    volumeClaimTemplates: Type.Optional(volumeClaimTemplates()),
    persistentVolumeClaimRetentionPolicy: Type.Optional(
      Type.Object(
        {
          whenDeleted: retention('What happens to PVCs when the App is deleted.'),
          whenScaled: retention('What happens to the PVCs of pods removed by a scale-down.'),
        },
        { description: 'Lifecycle of the PVCs created from volumeClaimTemplates.', default: {} },
      ),
    ),
    updateStrategy: Type.Optional(UpdateStrategySchema),
    volumeClaimUpdateStrategy: Type.Optional(VolumeClaimUpdateStrategySchema),
    imagePrewarm: Type.Optional(ImagePrewarmSchema),
    lifecycle: Type.Optional(LifecycleSchema),
    reserveOrdinals: Type.Optional(ReserveOrdinalsSchema),
    scaleStrategy: Type.Optional(ScaleStrategySchema),
    progressDeadlineSeconds: progressDeadlineSeconds(),
  },
  {
    description: 'Desired state of the App.',
    'x-kubernetes-validations': [
      ...selectorMatchesTemplateRules,
      ...immutableSpecRules,
      ...ordinalRangeRules,
      ...scaleStrategyRules,
      ...specifiedDeleteRules,
      ...priorityRules,
      ...progressDeadlineRules,
      ...rollbackOnDeadlineRules,
    ],
  },
);
export type AppSpec = Static<typeof AppSpecSchema>;
