/** The CustomResourceDefinitions (apiextensions.k8s.io/v1) of ebb, built from the TypeBox schemas. */
import { appRootRules } from './app-rules.ts';
import { AppSpecSchema } from './app-spec.ts';
import { AppStatusSchema } from './app-status.ts';
import {
  APP_CRD_NAME,
  APP_KIND,
  APP_LIST_KIND,
  APP_PLURAL,
  APP_SHORT_NAMES,
  APP_SINGULAR,
  CATEGORIES,
  CHECK_TEMPLATE_CRD_NAME,
  CHECK_TEMPLATE_KIND,
  CHECK_TEMPLATE_LIST_KIND,
  CHECK_TEMPLATE_PLURAL,
  CHECK_TEMPLATE_SHORT_NAMES,
  CHECK_TEMPLATE_SINGULAR,
  CLUSTER_CHECK_TEMPLATE_CRD_NAME,
  CLUSTER_CHECK_TEMPLATE_KIND,
  CLUSTER_CHECK_TEMPLATE_LIST_KIND,
  CLUSTER_CHECK_TEMPLATE_PLURAL,
  CLUSTER_CHECK_TEMPLATE_SHORT_NAMES,
  CLUSTER_CHECK_TEMPLATE_SINGULAR,
  GROUP,
  IMAGE_LIST_CRD_NAME,
  IMAGE_LIST_KIND,
  IMAGE_LIST_LIST_KIND,
  IMAGE_LIST_PLURAL,
  IMAGE_LIST_SHORT_NAMES,
  IMAGE_LIST_SINGULAR,
  IMAGE_PULL_JOB_CRD_NAME,
  IMAGE_PULL_JOB_KIND,
  IMAGE_PULL_JOB_LIST_KIND,
  IMAGE_PULL_JOB_PLURAL,
  IMAGE_PULL_JOB_SHORT_NAMES,
  IMAGE_PULL_JOB_SINGULAR,
  VERSION,
} from './group.ts';
import { CheckTemplateSpecSchema } from './check-template.ts';
import { ImageListSpecSchema, ImageListStatusSchema } from './image-list.ts';
import { ImagePullJobSpecSchema, ImagePullJobStatusSchema } from './image-pull-job.ts';
import { withUpstreamTemplateSchemas } from './pod-template-crd.ts';
import type { CelRule } from './schema-kit.ts';
import { toStructural, type JSONSchemaProps } from './structural.ts';
import type { TSchema } from '@sinclair/typebox';

export interface PrinterColumn {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources?: { status: Record<string, never>; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath: string } };
      additionalPrinterColumns: PrinterColumn[];
    }>;
  };
}

const CRD_LABELS = { 'app.kubernetes.io/name': 'ebb', 'app.kubernetes.io/part-of': 'ebb' };

interface RootParts {
  description: string;
  spec: TSchema;
  /** Absent: a kind without status (check templates). */
  status?: TSchema;
  specRequired: boolean;
  rules?: CelRule[];
  /** Post-processes the structural spec schema (the App splices in the upstream pod template schema). */
  refineSpec?: (spec: JSONSchemaProps) => JSONSchemaProps;
}

/** The root object schema: apiVersion/kind/metadata as the apiserver wants them, spec and status from TypeBox. */
function rootSchema(parts: RootParts): JSONSchemaProps {
  const root: JSONSchemaProps = {
    description: parts.description,
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: 'Versioned schema of this object.' },
      kind: { type: 'string', description: 'The REST resource this object represents.' },
      // A structural schema may only constrain metadata.name/generateName; declaring name lets CEL rules point at it.
      metadata: { type: 'object', properties: { name: { type: 'string' } } },
      spec: (parts.refineSpec ?? ((spec) => spec))(toStructural(parts.spec, '.spec')),
      ...(parts.status ? { status: toStructural(parts.status, '.status') } : {}),
    },
  };
  if (parts.specRequired) root['required'] = ['spec'];
  if (parts.rules) root['x-kubernetes-validations'] = parts.rules;
  return root;
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const appPrinterColumns: PrinterColumn[] = [
  { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired number of pods.' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Pods ready.' },
  { name: 'Updated', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'Pods at the update revision.' },
  { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas', description: 'Pods ready for minReadySeconds.' },
  { name: 'Revision', type: 'string', jsonPath: '.status.updateRevision', description: 'The update revision.' },
  { name: 'Paused', type: 'boolean', jsonPath: '.spec.updateStrategy.rollingUpdate.paused', description: 'Rollout paused.' },
  {
    name: 'Held',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="RolloutHeld")].status',
    description: 'True while the apiserver would refuse the replacement pods: no pod is deleted (condition RolloutHeld says why).',
  },
  AGE,
];

export const imageListPrinterColumns: PrinterColumn[] = [
  {
    name: 'Failed',
    type: 'string',
    jsonPath: '.status.images[?(@.phase=="Failed")].image',
    description: 'An image whose last pull failed (the first, if several).',
  },
  {
    name: 'Deferred',
    type: 'string',
    jsonPath: '.status.images[?(@.phase=="Deferred")].image',
    description: 'An image not pulled while the image filesystem of the node is too full (the first, if several).',
  },
  AGE,
  { name: 'Generation', type: 'integer', jsonPath: '.metadata.generation', description: 'Generation of the spec.', priority: 1 },
  { name: 'Observed', type: 'integer', jsonPath: '.status.observedGeneration', description: 'Generation the daemon on the node has acted on.', priority: 1 },
];

type Version = CustomResourceDefinition['spec']['versions'][number];

/** One CRD of the group, served and stored at VERSION, in the category `ebb`. */
function crd(
  name: string,
  names: { kind: string; listKind: string; plural: string; singular: string; shortNames: readonly string[] },
  scope: 'Namespaced' | 'Cluster',
  version: Pick<Version, 'schema' | 'subresources' | 'additionalPrinterColumns'>,
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name, labels: { ...CRD_LABELS } },
    spec: {
      group: GROUP,
      names: { ...names, shortNames: [...names.shortNames], categories: [...CATEGORIES] },
      scope,
      versions: [{ name: VERSION, served: true, storage: true, ...version }],
    },
  };
}

export function appCrd(): CustomResourceDefinition {
  const names = { kind: APP_KIND, listKind: APP_LIST_KIND, plural: APP_PLURAL, singular: APP_SINGULAR, shortNames: APP_SHORT_NAMES };
  return crd(APP_CRD_NAME, names, 'Namespaced', {
    schema: {
      openAPIV3Schema: rootSchema({
        description: 'App is an enhanced StatefulSet: in-place updates, paused and canary rollouts, image pre-warming.',
        spec: AppSpecSchema,
        status: AppStatusSchema,
        specRequired: true,
        rules: appRootRules,
        refineSpec: (spec) => withUpstreamTemplateSchemas(spec),
      }),
    },
    subresources: {
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
    },
    additionalPrinterColumns: appPrinterColumns,
  });
}

export function imageListCrd(): CustomResourceDefinition {
  const names = {
    kind: IMAGE_LIST_KIND,
    listKind: IMAGE_LIST_LIST_KIND,
    plural: IMAGE_LIST_PLURAL,
    singular: IMAGE_LIST_SINGULAR,
    shortNames: IMAGE_LIST_SHORT_NAMES,
  };
  return crd(IMAGE_LIST_CRD_NAME, names, 'Cluster', {
    schema: {
      openAPIV3Schema: rootSchema({
        description: 'ImageList is the set of images one node should hold; it is named after the node.',
        spec: ImageListSpecSchema,
        status: ImageListStatusSchema,
        specRequired: false,
      }),
    },
    subresources: { status: {} },
    additionalPrinterColumns: imageListPrinterColumns,
  });
}

export const imagePullJobPrinterColumns: PrinterColumn[] = [
  { name: 'Desired', type: 'integer', jsonPath: '.status.desired', description: 'Nodes the selector picks.' },
  { name: 'Active', type: 'integer', jsonPath: '.status.active', description: 'Nodes pulling now.' },
  { name: 'Succeeded', type: 'integer', jsonPath: '.status.succeeded', description: 'Nodes that pulled every image.' },
  { name: 'Failed', type: 'integer', jsonPath: '.status.failed', description: 'Nodes whose pull failed (status.failedNodes says why).' },
  { name: 'Complete', type: 'string', jsonPath: '.status.conditions[?(@.type=="Complete")].status', description: 'Every selected node is done.' },
  AGE,
  { name: 'Policy', type: 'string', jsonPath: '.spec.completionPolicy', description: 'Always or Never.', priority: 1 },
];

export function imagePullJobCrd(): CustomResourceDefinition {
  const names = {
    kind: IMAGE_PULL_JOB_KIND,
    listKind: IMAGE_PULL_JOB_LIST_KIND,
    plural: IMAGE_PULL_JOB_PLURAL,
    singular: IMAGE_PULL_JOB_SINGULAR,
    shortNames: IMAGE_PULL_JOB_SHORT_NAMES,
  };
  return crd(IMAGE_PULL_JOB_CRD_NAME, names, 'Namespaced', {
    schema: {
      openAPIV3Schema: rootSchema({
        description: 'ImagePullJob pulls images onto the nodes a label selector picks, a few nodes at a time, through their ImageLists.',
        spec: ImagePullJobSpecSchema,
        status: ImagePullJobStatusSchema,
        specRequired: true,
      }),
    },
    subresources: { status: {} },
    additionalPrinterColumns: imagePullJobPrinterColumns,
  });
}

export const checkTemplatePrinterColumns: PrinterColumn[] = [
  { name: 'Interval', type: 'string', jsonPath: '.spec.interval', description: 'Time between measurements (default 30s).' },
  { name: 'Count', type: 'integer', jsonPath: '.spec.count', description: 'Measurements to take.' },
  { name: 'Prometheus', type: 'string', jsonPath: '.spec.prometheus.address', description: 'The Prometheus server, for a Prometheus check.' },
  { name: 'Web', type: 'string', jsonPath: '.spec.web.url', description: 'The URL, for a web check.', priority: 1 },
  AGE,
];

/** A CheckTemplate (namespaced) or a ClusterCheckTemplate: an analysis check Apps name by templateRef; no status. */
export function checkTemplateCrd(scope: 'Namespaced' | 'Cluster'): CustomResourceDefinition {
  const cluster = scope === 'Cluster';
  const names = cluster
    ? {
        kind: CLUSTER_CHECK_TEMPLATE_KIND,
        listKind: CLUSTER_CHECK_TEMPLATE_LIST_KIND,
        plural: CLUSTER_CHECK_TEMPLATE_PLURAL,
        singular: CLUSTER_CHECK_TEMPLATE_SINGULAR,
        shortNames: CLUSTER_CHECK_TEMPLATE_SHORT_NAMES,
      }
    : {
        kind: CHECK_TEMPLATE_KIND,
        listKind: CHECK_TEMPLATE_LIST_KIND,
        plural: CHECK_TEMPLATE_PLURAL,
        singular: CHECK_TEMPLATE_SINGULAR,
        shortNames: CHECK_TEMPLATE_SHORT_NAMES,
      };
  const description = cluster
    ? 'ClusterCheckTemplate is an analysis check defined once for the cluster; Apps of any namespace name it by templateRef (kind ClusterCheckTemplate).'
    : "CheckTemplate is an analysis check defined once in a namespace; the namespace's Apps name it by templateRef.";
  return crd(cluster ? CLUSTER_CHECK_TEMPLATE_CRD_NAME : CHECK_TEMPLATE_CRD_NAME, names, scope, {
    schema: { openAPIV3Schema: rootSchema({ description, spec: CheckTemplateSpecSchema, specRequired: true }) },
    additionalPrinterColumns: checkTemplatePrinterColumns,
  });
}

export function allCrds(): CustomResourceDefinition[] {
  return [appCrd(), imageListCrd(), imagePullJobCrd(), checkTemplateCrd('Namespaced'), checkTemplateCrd('Cluster')];
}
