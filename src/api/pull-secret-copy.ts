/**
 * Pull-secret copies. An ImageList entry names its pull Secret by namespace and name; the node daemon never
 * reads that Secret. The worker copies it into one namespace (the pull-secret namespace, a setting of both
 * processes, `ebb-node` in deploy/), one copy per ImageList and Secret, under a name both derive from the
 * node and the Secret, and the daemon reads only there. A copy records what it copies in annotations, which
 * the daemon checks before using it.
 */
import { createHash } from 'node:crypto';
import { GROUP } from './group.ts';

export interface SecretRef {
  namespace: string;
  name: string;
}

/** Label of every copy: a digest of its ImageList's name (a node name may be longer than a label value). */
export const PULL_SECRET_COPY_LABEL = `${GROUP}/pull-secret-copy-of`;
/** Annotations of a copy: the ImageList (node) it serves, and `<namespace>/<name>` of the Secret it copies. */
export const PULL_SECRET_NODE_ANNOTATION = `${GROUP}/image-list`;
export const PULL_SECRET_SOURCE_ANNOTATION = `${GROUP}/pull-secret`;
/** The worker's field manager for copies. */
export const PULL_SECRET_FIELD_MANAGER = 'ebb-pull-secrets';
/** Secret types a copy is made of, and the data key each keeps its registry credentials under. */
export const PULL_SECRET_TYPES: Readonly<Record<string, string>> = {
  'kubernetes.io/dockerconfigjson': '.dockerconfigjson',
  'kubernetes.io/dockercfg': '.dockercfg',
};

const digest = (text: string, length: number): string => createHash('sha256').update(text).digest('hex').slice(0, length);

/** The label value that selects the copies made for ImageList `node`. */
export const copyLabelValue = (node: string): string => digest(node, 32);

/** The name of the copy of `secret` made for ImageList `node` (deterministic, 49 characters). */
export function pullSecretCopyName(node: string, secret: SecretRef): string {
  return `ebb-pull-${digest(`${node}\n${secret.namespace}\n${secret.name}`, 40)}`;
}

export const sourceAnnotation = (secret: SecretRef): string => `${secret.namespace}/${secret.name}`;
