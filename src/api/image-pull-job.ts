/**
 * The ImagePullJob kind (namespaced): pull a set of images onto every node a label selector picks, a few nodes
 * at a time, and report per-node outcomes. The worker carries it out through ImageList entries written with a
 * field manager of the job's own, so the node daemon still has one input.
 */
import { Type, type Static } from '@sinclair/typebox';
import { imageReferenceSchema } from './image-ref.ts';
import { conditionList, ObjectMetaSchema } from './meta.ts';
import { dateTime, int32, int64, LABEL_KEY_MAX_LENGTH, labelMap, listMap, stringEnum, type CelRule } from './schema-kit.ts';

export const MAX_JOB_IMAGES = 64;
export const MAX_JOB_PULL_SECRETS = 8;
/** Tolerations one job may list (as many as a pod template's containers). */
export const MAX_JOB_TOLERATIONS = 64;
/** Nodes named in `status.failedNodes` (the counts are exact). */
export const MAX_FAILED_NODES_LISTED = 20;
const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const CompletionPolicy = { always: 'Always', never: 'Never' } as const;
export type CompletionPolicy = (typeof CompletionPolicy)[keyof typeof CompletionPolicy];

/** A core/v1 Toleration, as a pod's: which node taints the job's pulls may go past. */
export const TolerationSchema = Type.Object(
  {
    key: Type.Optional(
      Type.String({ description: 'The taint key the toleration applies to; empty: every key (operator must be Exists).', maxLength: LABEL_KEY_MAX_LENGTH }),
    ),
    operator: Type.Optional(stringEnum(['Exists', 'Equal'], { description: 'Exists: any value; Equal (default): the taint\u2019s value equals `value`.' })),
    value: Type.Optional(Type.String({ description: 'The taint value the toleration matches (operator Equal).', maxLength: 63 })),
    effect: Type.Optional(stringEnum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'], { description: 'The taint effect to match; empty: every effect.' })),
    tolerationSeconds: Type.Optional(int64({ description: 'Accepted as in a pod, and ignored: a pull is no running pod to evict.' })),
  },
  {
    description: 'Tolerates the taints that match the triple <key,value,effect> with operator <operator>.',
    'x-kubernetes-validations': [
      { rule: "(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')", message: 'an empty key requires operator Exists' },
    ],
  },
);
export type Toleration = Static<typeof TolerationSchema>;

/** What cannot change once the job exists: what it pulls and where (as a Job's template). */
const immutable = (field: string): CelRule => ({
  rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
  message: `${field} is immutable: create another ImagePullJob`,
  fieldPath: `.${field}`,
});

export const ImagePullJobSpecSchema = Type.Object(
  {
    images: Type.Array(imageReferenceSchema('Image reference (OCI distribution grammar), e.g. registry.example.com/team/app:v2.'), {
      description: 'Images to pull on every selected node.',
      minItems: 1,
      maxItems: MAX_JOB_IMAGES,
      'x-kubernetes-list-type': 'set',
    }),
    nodeSelector: Type.Optional(labelMap('Labels a node must carry with exactly these values to be selected; empty or absent: every node.')),
    parallelism: Type.Optional(
      int32({ description: 'At most this many nodes pull at once; absent: every selected node at once.', minimum: 1, maximum: 10_000 }),
    ),
    pullSecrets: Type.Optional(
      listMap(
        Type.Object({
          name: Type.String({ description: 'Name of a Secret in the job\u2019s namespace.', minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN }),
        }),
        ['name'],
        {
          description:
            'kubernetes.io/dockerconfigjson Secrets of the job\u2019s namespace with registry credentials. An ImageList entry holds one Secret: the first one listed is used for every image.',
          maxItems: MAX_JOB_PULL_SECRETS,
        },
      ),
    ),
    tolerations: Type.Optional(
      Type.Array(TolerationSchema, {
        description:
          'Taints the job may pull past. A node with a NoSchedule or NoExecute taint none of these tolerates is left out (counted in status.untolerated), as kube-scheduler would keep a pod without them off it.',
        maxItems: MAX_JOB_TOLERATIONS,
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    completionPolicy: Type.Optional(
      stringEnum([CompletionPolicy.always, CompletionPolicy.never], {
        description:
          'Always (default): the job completes once every selected node pulled the images or failed. Never: the job never completes and keeps warming nodes that join or gain the labels.',
        default: CompletionPolicy.always,
      }),
    ),
    activeDeadlineSeconds: Type.Optional(
      int64({ description: 'Seconds after the job starts when it fails (condition Failed, reason DeadlineExceeded) and stops pulling.', minimum: 1 }),
    ),
    ttlSecondsAfterFinished: Type.Optional(
      int32({ description: 'Seconds after the job finished (Complete or Failed) when it is deleted; absent: it stays.', minimum: 0 }),
    ),
  },
  {
    description: 'What to pull, where, and for how long.',
    'x-kubernetes-validations': [
      immutable('images'),
      immutable('nodeSelector'),
      immutable('tolerations'),
      immutable('pullSecrets'),
      immutable('completionPolicy'),
    ],
  },
);
export type ImagePullJobSpec = Static<typeof ImagePullJobSpecSchema>;

export const FailedNodeSchema = Type.Object({
  node: Type.String({ description: 'The node.', minLength: 1 }),
  message: Type.String({ description: 'Why: the image and the daemon\u2019s message.', maxLength: 1024 }),
});
export type FailedNode = Static<typeof FailedNodeSchema>;

export const ImagePullJobStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(int64({ description: 'The .metadata.generation this status was computed from.', minimum: 0 })),
    startTime: Type.Optional(dateTime({ description: 'When the worker first acted on the job.' })),
    completionTime: Type.Optional(dateTime({ description: 'When the job finished (Complete or Failed).' })),
    desired: Type.Optional(int32({ description: 'Nodes the selector picks whose taints the job tolerates.', minimum: 0 })),
    untolerated: Type.Optional(
      int32({ description: 'Nodes the selector picks that the job leaves out: a NoSchedule or NoExecute taint it does not tolerate.', minimum: 0 }),
    ),
    active: Type.Optional(int32({ description: 'Nodes asked to pull and not done yet.', minimum: 0 })),
    succeeded: Type.Optional(int32({ description: 'Nodes that report every image pulled.', minimum: 0 })),
    failed: Type.Optional(int32({ description: 'Nodes that report a failed pull.', minimum: 0 })),
    failedNodes: Type.Optional(
      listMap(FailedNodeSchema, ['node'], { description: `Failed nodes and why (the first ${MAX_FAILED_NODES_LISTED}).`, maxItems: MAX_FAILED_NODES_LISTED }),
    ),
    conditions: Type.Optional(conditionList('Complete (every node done) or Failed (deadline exceeded).')),
  },
  { description: 'Progress of the job, from the ImageList status the node daemons report.' },
);
export type ImagePullJobStatus = Static<typeof ImagePullJobStatusSchema>;

export const ImagePullJobSchema = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: ObjectMetaSchema,
  spec: ImagePullJobSpecSchema,
  status: Type.Optional(ImagePullJobStatusSchema),
});
export type ImagePullJob = Static<typeof ImagePullJobSchema>;
