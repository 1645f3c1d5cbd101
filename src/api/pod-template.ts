/**
 * The pod template and volume claim templates of an App. Their CRD schema is the upstream core/v1 schema
 * (PodTemplateSpec, PersistentVolumeClaim) generated from k8s.io/api (`upstream-schema.ts`), so the apiserver
 * types every field at admission; the schemas here declare what ebb reads and what it constrains beyond
 * upstream, and are laid over the upstream ones when the CRD is rendered (`pod-template-crd.ts`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { imageReferenceSchema } from './image-ref.ts';
import { MAX_CLAIM_REQUESTS, MAX_QUANTITY_LENGTH, volumeClaimTemplateUpdateRules } from './volume-claim-update.ts';
import { dnsLabel, intOrString, labelMap, listMap, stringEnum, stringMap, upstreamObject } from './schema-kit.ts';

const MAX_CONTAINERS = 64;
export const MAX_VOLUME_CLAIM_TEMPLATES = 32;

/**
 * Declared beyond upstream's embedded ObjectMeta (name, namespace, labels, annotations, finalizers): manifests
 * exported from a cluster carry `creationTimestamp: null`, which would otherwise fail strict field validation.
 */
const creationTimestamp = () =>
  Type.Optional(Type.String({ format: 'date-time', description: 'Ignored; accepted so that manifests exported from a cluster apply unchanged.' }));

/** Fields ebb declares that the upstream schemas lack (paths relative to `spec`). */
export const EXTRA_TEMPLATE_FIELDS: ReadonlySet<string> = new Set([
  '.spec.template.metadata.creationTimestamp',
  '.spec.volumeClaimTemplates[].metadata.creationTimestamp',
]);

export const ContainerSchema = upstreamObject(
  {
    name: dnsLabel('Container name, unique in the pod (a DNS label).'),
    image: imageReferenceSchema('Container image reference (OCI distribution grammar, as in ImageLists). Changing only images allows an in-place update.'),
  },
  { description: 'A container (core/v1 Container).' },
);
export type Container = Static<typeof ContainerSchema>;

export const PodSpecSchema = upstreamObject(
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
    // The rule sits on the pod spec (a CEL rule on an optional field runs only when it is set, which is the
    // point) and names the field, so the refusal reads spec.template.spec.activeDeadlineSeconds.
    'x-kubernetes-validations': [
      {
        rule: '!has(self.activeDeadlineSeconds)',
        message: 'activeDeadlineSeconds is not supported for App pods',
        fieldPath: '.activeDeadlineSeconds',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);
export type PodSpec = Static<typeof PodSpecSchema>;

export const PodTemplateMetadataSchema = upstreamObject(
  {
    labels: Type.Optional(labelMap('Pod labels; must satisfy spec.selector.')),
    annotations: Type.Optional(stringMap({ description: 'Pod annotations.' })),
    creationTimestamp: creationTimestamp(),
  },
  { description: 'Pod metadata; ebb copies labels and annotations onto each pod.' },
);

export const PodTemplateSpecSchema = Type.Object(
  {
    metadata: Type.Optional(PodTemplateMetadataSchema),
    spec: PodSpecSchema,
  },
  { description: 'The pod every ordinal is created from (core/v1 PodTemplateSpec). A change of it is a new revision.' },
);
export type PodTemplateSpec = Static<typeof PodTemplateSpecSchema>;

export const PersistentVolumeClaimTemplateSchema = upstreamObject(
  {
    metadata: upstreamObject(
      {
        name: dnsLabel('Claim name; each pod gets the PVC <name>-<app>-<ordinal> mounted as volume <name>.'),
        labels: Type.Optional(labelMap('PVC labels.')),
        annotations: Type.Optional(stringMap({ description: 'PVC annotations.' })),
        creationTimestamp: creationTimestamp(),
      },
      { description: 'Claim metadata; name is required.' },
    ),
    spec: upstreamObject(
      {
        accessModes: Type.Optional(Type.Array(Type.String(), { description: 'Access modes, e.g. ReadWriteOnce.', maxItems: 8 })),
        storageClassName: Type.Optional(Type.String({ description: 'StorageClass of the claims; the default class when unset.' })),
        resources: Type.Optional(
          upstreamObject(
            {
              requests: Type.Optional(
                Type.Record(Type.String(), intOrString({ maxLength: MAX_QUANTITY_LENGTH }), {
                  description: 'Requested resources, e.g. storage: 10Gi. The storage request may grow after creation (see volumeClaimUpdateStrategy).',
                  maxProperties: MAX_CLAIM_REQUESTS,
                }),
              ),
            },
            { description: 'The minimum resources each claim should have.' },
          ),
        ),
      },
      { description: 'The claim spec (core/v1 PersistentVolumeClaimSpec).' },
    ),
  },
  { description: 'A PersistentVolumeClaim template (core/v1 PersistentVolumeClaim).' },
);
export type PersistentVolumeClaimTemplate = Static<typeof PersistentVolumeClaimTemplateSchema>;

export function volumeClaimTemplates() {
  return Type.Array(PersistentVolumeClaimTemplateSchema, {
    description: 'Claims each pod gets, one PVC per template and ordinal. Only a storage request may change, and only grow (see volumeClaimUpdateStrategy).',
    maxItems: MAX_VOLUME_CLAIM_TEMPLATES,
    'x-kubernetes-validations': [
      { rule: 'self.all(t, self.exists_one(u, u.metadata.name == t.metadata.name))', message: 'volumeClaimTemplates names must be unique' },
      ...volumeClaimTemplateUpdateRules(),
    ],
  });
}
