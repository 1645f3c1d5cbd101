/**
 * The ImageList kind: the images one node should hold (cluster-scoped, named after the node). Entries form a
 * list-map keyed by image, so several server-side-apply field managers (one per App, plus people) share it.
 */
import { Type, type Static } from '@sinclair/typebox';
import { imageReferenceSchema } from './image-ref.ts';
import { ObjectMetaSchema } from './meta.ts';
import { dateTime, dnsLabel, int32, int64, listMap, stringEnum } from './schema-kit.ts';

export const DEFAULT_REPULL_INTERVAL_SECONDS = 86_400;
export const MIN_REPULL_INTERVAL_SECONDS = 60;
export const MAX_IMAGES_PER_NODE = 1024;
const DNS_SUBDOMAIN_MAX_LENGTH = 253;
const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const ImageListEntrySchema = Type.Object({
  image: imageReferenceSchema('Image reference (OCI distribution grammar), e.g. registry.example.com/team/app:v2.'),
  alwaysPull: Type.Optional(Type.Boolean({ description: 'Pull again every repullIntervalSeconds even when present.', default: false })),
  repullIntervalSeconds: Type.Optional(
    int32({ description: 'With alwaysPull: seconds between pulls.', minimum: MIN_REPULL_INTERVAL_SECONDS, default: DEFAULT_REPULL_INTERVAL_SECONDS }),
  ),
  pullRequestedAt: Type.Optional(dateTime({ description: 'Pull again when this is later than the last pull.', maxLength: 64 })),
  pullSecret: Type.Optional(
    Type.Object(
      {
        namespace: dnsLabel('Namespace of the Secret.'),
        name: Type.String({ description: 'Name of the Secret.', minLength: 1, maxLength: DNS_SUBDOMAIN_MAX_LENGTH, pattern: DNS_SUBDOMAIN_PATTERN }),
      },
      { description: 'A kubernetes.io/dockerconfigjson Secret with credentials for the image registry.' },
    ),
  ),
});
export type ImageListEntry = Static<typeof ImageListEntrySchema>;

export const ImageListSpecSchema = Type.Object(
  {
    images: Type.Optional(
      listMap(ImageListEntrySchema, ['image'], { description: 'Images to hold on the node, one entry per image.', maxItems: MAX_IMAGES_PER_NODE }),
    ),
  },
  { description: 'Images the node should hold.' },
);
export type ImageListSpec = Static<typeof ImageListSpecSchema>;

/**
 * Where an image stands on the node. `Deferred`: not pulled for now because the node's image filesystem is too
 * full (the message says how full, and the threshold); the daemon looks again at its next re-check.
 */
export const ImagePhase = { pending: 'Pending', pulling: 'Pulling', pulled: 'Pulled', failed: 'Failed', deferred: 'Deferred' } as const;
export type ImagePhase = (typeof ImagePhase)[keyof typeof ImagePhase];

export const ImageStatusSchema = Type.Object({
  image: Type.String({ description: 'The spec entry this reports on.', minLength: 1 }),
  phase: stringEnum([ImagePhase.pending, ImagePhase.pulling, ImagePhase.pulled, ImagePhase.failed, ImagePhase.deferred], {
    description: 'Where the pull stands. Deferred: not pulled while the image filesystem of the node is too full (see message).',
  }),
  imageRef: Type.Optional(Type.String({ description: 'Reference of the pulled image in the container runtime (digest or ID).' })),
  lastPullTime: Type.Optional(dateTime({ description: 'When the last successful pull finished.' })),
  pullStartTime: Type.Optional(dateTime({ description: 'When the running or the last pull attempt started.' })),
  lastPullDurationMillis: Type.Optional(int64({ description: 'How long the last successful pull took, in milliseconds.', minimum: 0 })),
  attempts: Type.Optional(int32({ description: 'Pull attempts since the last success or the last pull request.', minimum: 0 })),
  message: Type.Optional(Type.String({ description: 'Details, e.g. why the last pull failed.', maxLength: 4096 })),
  observedPullRequestedAt: Type.Optional(dateTime({ description: 'The spec pullRequestedAt the last pull answered.' })),
});
export type ImageStatus = Static<typeof ImageStatusSchema>;

export const ImageListStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(int64({ description: 'The .metadata.generation this status was computed from.', minimum: 0 })),
    images: Type.Optional(listMap(ImageStatusSchema, ['image'], { description: 'Per-image pull state.', maxItems: MAX_IMAGES_PER_NODE })),
  },
  { description: 'What the daemon on the node observed.' },
);
export type ImageListStatus = Static<typeof ImageListStatusSchema>;

export const ImageListSchema = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: ObjectMetaSchema,
  spec: Type.Optional(ImageListSpecSchema),
  status: Type.Optional(ImageListStatusSchema),
});
export type ImageList = Static<typeof ImageListSchema>;
