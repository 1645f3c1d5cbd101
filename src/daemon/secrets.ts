/**
 * Pull credentials of an ImageList entry: its pull Secret, read when a pull starts (so a rotated or a
 * late-created Secret is used by the next attempt), matched against the image's registry.
 */
import type { ImageReference } from '../api/image-ref.ts';
import { isKubeError } from '../kube/errors.ts';
import { core } from '../kube/paths.ts';
import type { KubeRest } from '../kube/rest.ts';
import { authsOfSecret, credentialsFor, type SecretData } from './auth.ts';
import type { PullAuth } from './runtime.ts';

export interface SecretRef {
  namespace: string;
  name: string;
}

/** Reading Secrets is not part of the daemon's default RBAC. */
const OPT_IN = 'reading pull secrets is opt-in: deploy/components/daemon-pull-secrets';

export type SecretErrorCode = 'NotFound' | 'Forbidden' | 'Invalid' | 'Unavailable';

/** Why a pull Secret gave no credentials; the message names the Secret, never its content. */
export class PullSecretError extends Error {
  override readonly name = 'PullSecretError';
  readonly code: SecretErrorCode;
  constructor(code: SecretErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Reads a Secret; the daemon's seam to the apiserver for credentials (tests pass a fake). */
export type SecretReader = (ref: SecretRef, signal: AbortSignal) => Promise<SecretData>;

export function restSecretReader(rest: KubeRest): SecretReader {
  return (ref, signal) => rest.get<SecretData>(core('secrets', ref.namespace, ref.name), signal);
}

/**
 * The credentials `ref`'s registry gets from the Secret, or undefined when the Secret has none for it (the
 * pull then goes without, as the kubelet does). Throws PullSecretError when the Secret cannot be used.
 */
export async function pullAuthFrom(read: SecretReader, secret: SecretRef, ref: ImageReference, signal: AbortSignal): Promise<PullAuth | undefined> {
  const what = `pull secret ${secret.namespace}/${secret.name}`;
  let data: SecretData;
  try {
    data = await read(secret, signal);
  } catch (err) {
    if (isKubeError(err, 'NotFound')) throw new PullSecretError('NotFound', `${what} not found`);
    if (isKubeError(err, 'Forbidden')) throw new PullSecretError('Forbidden', `${what}: the daemon may not read it (${OPT_IN})`);
    if (isKubeError(err, 'Unauthorized')) throw new PullSecretError('Forbidden', `${what}: the apiserver does not accept the daemon's credentials`);
    if (signal.aborted) throw err;
    throw new PullSecretError('Unavailable', `${what}: cannot be read (${isKubeError(err) ? err.code : 'error'})`);
  }
  const parsed = authsOfSecret(data);
  if (!parsed.ok) throw new PullSecretError('Invalid', `${what} is unusable: ${parsed.reason}`);
  return credentialsFor(parsed.auths, ref);
}
