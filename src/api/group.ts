/** The ebb API group, its kinds and the REST references to them. */
import type { ResourceRef } from '../kube/paths.ts';

export const GROUP = 'apps.ebb.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const APP_KIND = 'App';
export const APP_LIST_KIND = 'AppList';
export const APP_PLURAL = 'apps';
export const APP_SINGULAR = 'app';
export const APP_SHORT_NAMES = ['ebapp'];

export const IMAGE_LIST_KIND = 'ImageList';
export const IMAGE_LIST_LIST_KIND = 'ImageListList';
export const IMAGE_LIST_PLURAL = 'imagelists';
export const IMAGE_LIST_SINGULAR = 'imagelist';
export const IMAGE_LIST_SHORT_NAMES = ['ebimg'];

export const IMAGE_PULL_JOB_KIND = 'ImagePullJob';
export const IMAGE_PULL_JOB_LIST_KIND = 'ImagePullJobList';
export const IMAGE_PULL_JOB_PLURAL = 'imagepulljobs';
export const IMAGE_PULL_JOB_SINGULAR = 'imagepulljob';
export const IMAGE_PULL_JOB_SHORT_NAMES = ['ebpull'];

export const CHECK_TEMPLATE_KIND = 'CheckTemplate';
export const CHECK_TEMPLATE_LIST_KIND = 'CheckTemplateList';
export const CHECK_TEMPLATE_PLURAL = 'checktemplates';
export const CHECK_TEMPLATE_SINGULAR = 'checktemplate';
export const CHECK_TEMPLATE_SHORT_NAMES = ['ebcheck'];

export const CLUSTER_CHECK_TEMPLATE_KIND = 'ClusterCheckTemplate';
export const CLUSTER_CHECK_TEMPLATE_LIST_KIND = 'ClusterCheckTemplateList';
export const CLUSTER_CHECK_TEMPLATE_PLURAL = 'clusterchecktemplates';
export const CLUSTER_CHECK_TEMPLATE_SINGULAR = 'clusterchecktemplate';
export const CLUSTER_CHECK_TEMPLATE_SHORT_NAMES = ['ebccheck'];

/** `kubectl get ebb` lists every ebb resource. */
export const CATEGORIES = ['ebb'];

/** The CustomResourceDefinition names (`<plural>.<group>`). */
export const APP_CRD_NAME = `${APP_PLURAL}.${GROUP}`;
export const IMAGE_LIST_CRD_NAME = `${IMAGE_LIST_PLURAL}.${GROUP}`;
export const IMAGE_PULL_JOB_CRD_NAME = `${IMAGE_PULL_JOB_PLURAL}.${GROUP}`;
export const CHECK_TEMPLATE_CRD_NAME = `${CHECK_TEMPLATE_PLURAL}.${GROUP}`;
export const CLUSTER_CHECK_TEMPLATE_CRD_NAME = `${CLUSTER_CHECK_TEMPLATE_PLURAL}.${GROUP}`;

export type AppSubresource = 'status' | 'scale';

/** Apps in a namespace (all namespaces when `namespace` is undefined), or one App, or one of its subresources. */
export function appRef(namespace?: string, name?: string, subresource?: AppSubresource): ResourceRef {
  return { group: GROUP, version: VERSION, resource: APP_PLURAL, namespace, name, subresource };
}

/** ImageLists (cluster-scoped; one per node, named after the node), or one of them, or its status. */
export function imageListRef(name?: string, subresource?: 'status'): ResourceRef {
  return { group: GROUP, version: VERSION, resource: IMAGE_LIST_PLURAL, name, subresource };
}

/** ImagePullJobs in a namespace (all namespaces when `namespace` is undefined), or one of them, or its status. */
export function imagePullJobRef(namespace?: string, name?: string, subresource?: 'status'): ResourceRef {
  return { group: GROUP, version: VERSION, resource: IMAGE_PULL_JOB_PLURAL, namespace, name, subresource };
}

/** One CheckTemplate (namespaced), or one ClusterCheckTemplate when `namespace` is undefined. */
export function checkTemplateRef(namespace: string | undefined, name: string): ResourceRef {
  const resource = namespace === undefined ? CLUSTER_CHECK_TEMPLATE_PLURAL : CHECK_TEMPLATE_PLURAL;
  return { group: GROUP, version: VERSION, resource, namespace, name };
}
