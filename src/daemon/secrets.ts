/**
 * Pull credentials of an ImageList entry. The daemon reads only the worker's copy of the entry's pull Secret
 * in the pull-secret namespace (src/api/pull-secret-copy.ts), never the Secret itself, and only when pull
 * secrets are enabled. It reads when a pull starts, so a rotated Secret (copied again) is used by the next
 * attempt. Whatever goes wrong, the status says only that the pull secret is unusable: whether the Secret
 * exists, its type or who may read it is not for every reader of ImageLists to learn.
 */
import type { ImageReference } from '../api/image-ref.ts';
import { PULL_SECRET_NODE_ANNOTATION, PULL_SECRET_SOURCE_ANNOTATION, pullSecretCopyName, sourceAnnotation, type SecretRef } from '../api/pull-secret-copy.ts';
import { isKubeError } from '../kube/errors.ts';
import { core } from '../kube/paths.ts';
import type { KubeRest } from '../kube/rest.ts';
import { authsOfSecret, credentialsFor, type SecretData } from './auth.ts';
import type { PullAuth } from './runtime.ts';

export type { SecretRef } from '../api/pull-secret-copy.ts';

export type SecretErrorCode = 'Disabled' | 'NotFound' | 'Forbidden' | 'Invalid' | 'Unavailable';

/** Why a pull Secret gave no credentials. The message is the same for every code; the code is for logs. */
export class PullSecretError extends Error {
  override readonly name = 'PullSecretError';
  readonly code: SecretErrorCode;
  constructor(code: SecretErrorCode, secret: SecretRef) {
    super(`pull secret ${secret.namespace}/${secret.name} is unusable`);
    this.code = code;
  }
}

/** Reads the Secret to take credentials from; the daemon's seam to the apiserver (tests pass a fake). */
export type SecretReader = (ref: SecretRef, signal: AbortSignal) => Promise<SecretData>;

interface Copy extends SecretData {
  metadata?: { annotations?: Record<string, string> };
}

/**
 * Reads the copy of `ref` made for ImageList `node` in `namespace`; undefined `namespace` (pull secrets not
 * enabled) refuses every read. A copy whose annotations name another node or Secret is refused as Invalid.
 */
export function copySecretReader(rest: KubeRest, namespace: string | undefined, node: string): SecretReader {
  return async (ref, signal) => {
    if (namespace === undefined) throw new PullSecretError('Disabled', ref);
    const copy = await rest.get<Copy>(core('secrets', namespace, pullSecretCopyName(node, ref)), signal);
    const annotations = copy.metadata?.annotations ?? {};
    if (annotations[PULL_SECRET_NODE_ANNOTATION] !== node || annotations[PULL_SECRET_SOURCE_ANNOTATION] !== sourceAnnotation(ref))
      throw new PullSecretError('Invalid', ref);
    return copy;
  };
}

function codeOf(err: unknown): SecretErrorCode {
  if (isKubeError(err, 'NotFound')) return 'NotFound';
  if (isKubeError(err, 'Forbidden') || isKubeError(err, 'Unauthorized')) return 'Forbidden';
  return 'Unavailable';
}

/**
 * The credentials `ref`'s registry gets from the pull secret, or undefined when it has none for it (the pull
 * then goes without, as the kubelet does). Throws PullSecretError when the pull secret cannot be used.
 */
export async function pullAuthFrom(read: SecretReader, secret: SecretRef, ref: ImageReference, signal: AbortSignal): Promise<PullAuth | undefined> {
  let data: SecretData;
  try {
    data = await read(secret, signal);
  } catch (err) {
    if (err instanceof PullSecretError) throw err;
    if (signal.aborted) throw err;
    throw new PullSecretError(codeOf(err), secret);
  }
  const parsed = authsOfSecret(data);
  if (!parsed.ok) throw new PullSecretError('Invalid', secret);
  return credentialsFor(parsed.auths, ref);
}
