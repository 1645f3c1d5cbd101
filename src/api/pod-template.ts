/**
 * The pod template and volume claim templates of an App. Only what ebb itself reads or what is cheap to check
 * is typed; every other field of a container, a PodSpec or a PVC is kept as written
 * (`x-kubernetes-preserve-unknown-fields`), because the apiserver validates the full Pod and PVC when ebb
 * creates them, and a failure there is reported as condition FailedCreatePod.
 */
import { Type, type Static } from '@sinclair/typebox';
import { imageReferenceSchema } from './image-ref.ts';
import { dnsLabel, labelMap, listMap, openObject, stringEnum, stringMap } from './schema-kit.ts';

const MAX_CONTAINERS = 64;
export const MAX_VOLUME_CLAIM_TEMPLATES = 32;

export const ContainerSchema = openObject(
  {
    name: dnsLabel('Container name, unique in the pod (a DNS label).'),
    image: imageReferenceSchema('Container image reference (OCI distribution grammar, as in ImageLists). Changing only images allows an in-place update.'),
  },
  { description: 'A container (core/v1 Container). Fields other than name and image are validated when the pod is created.' },
);
export type Container = Static<typeof ContainerSchema>;

export const PodSpecSchema = openObject(
  {
    containers: listMap(ContainerSchema, ['name'], {
      description: 'Containers of the pod; at least one.',
      minItems: 1,
      maxItems: MAX_CONTAINERS,
    }),
    initContainers: Type.Optional(
      listMap(ContainerSchema, ['name'], { description: 'Init containers, run in order before the containers.', maxItems: MAX_CONTAINERS }),
    ),
    restartPolicy: Type.Optional(stringEnum(['Always'], { description: 'App pods always restart: only Always is allowed (as for StatefulSets).' })),
    activeDeadlineSeconds: Type.Optional(Type.Integer({ description: 'Not supported for App pods (as for StatefulSets).' })),
  },
  {
    description: 'The pod spec (core/v1 PodSpec); hostname and subdomain are set by ebb.',
    'x-kubernetes-validations': [{ rule: '!has(self.activeDeadlineSeconds)', message: 'activeDeadlineSeconds is not supported for App pods' }],
  },
);
export type PodSpec = Static<typeof PodSpecSchema>;

export const PodTemplateMetadataSchema = openObject(
  {
    labels: Type.Optional(labelMap('Pod labels; must satisfy spec.selector.')),
    annotations: Type.Optional(stringMap({ description: 'Pod annotations.' })),
  },
  { description: 'Pod metadata; ebb copies labels and annotations onto each pod.' },
);

export const PodTemplateSpecSchema = Type.Object(
  {
    metadata: Type.Optional(PodTemplateMetadataSchema),
    spec: PodSpecSchema,
  },
  { description: 'The pod every ordinal is created from. A change of it is a new revision.' },
);
export type PodTemplateSpec = Static<typeof PodTemplateSpecSchema>;

export const PersistentVolumeClaimTemplateSchema = openObject(
  {
    metadata: openObject(
      {
        name: dnsLabel('Claim name; each pod gets the PVC <name>-<app>-<ordinal> mounted as volume <name>.'),
        labels: Type.Optional(labelMap('PVC labels.')),
        annotations: Type.Optional(stringMap({ description: 'PVC annotations.' })),
      },
      { description: 'Claim metadata; name is required.' },
    ),
    spec: openObject(
      {
        accessModes: Type.Optional(Type.Array(Type.String(), { description: 'Access modes, e.g. ReadWriteOnce.', maxItems: 8 })),
        storageClassName: Type.Optional(Type.String({ description: 'StorageClass of the claims; the default class when unset.' })),
      },
      { description: 'The claim spec (core/v1 PersistentVolumeClaimSpec).' },
    ),
  },
  { description: 'A PersistentVolumeClaim template (core/v1 PersistentVolumeClaim).' },
);
export type PersistentVolumeClaimTemplate = Static<typeof PersistentVolumeClaimTemplateSchema>;

export function volumeClaimTemplates() {
  return Type.Array(PersistentVolumeClaimTemplateSchema, {
    description: 'Claims each pod gets, one PVC per template and ordinal. Immutable.',
    maxItems: MAX_VOLUME_CLAIM_TEMPLATES,
    'x-kubernetes-validations': [
      { rule: 'self.all(t, self.exists_one(u, u.metadata.name == t.metadata.name))', message: 'volumeClaimTemplates names must be unique' },
    ],
  });
}
