/**
 * Names shared by every process that touches Redis: queue names, the key prefix, the job payload and the
 * ids derived from it. Changing any of these is a breaking change of the queue contract.
 */
import { ClassifiedError } from '../common/errors.ts';

/** Every BullMQ key starts with this; the braces are a hash tag, so all keys map to one Redis Cluster slot. */
export const KEY_PREFIX = '{ebb}';
export const RECONCILE_QUEUE = 'reconcile';
export const TIMERS_QUEUE = 'timers';
/** Analysis measurements (web and Prometheus checks) taken off the reconcile's slot (`workers/measure`). */
export const MEASURE_QUEUE = 'measure';

export type ObjectKind = 'App' | 'ImageList' | 'ImagePullJob';

/** Kinds that live in a namespace (their keys carry one). */
const NAMESPACED: ReadonlySet<string> = new Set(['App', 'ImagePullJob']);

/** The reconcile job payload: only the key of the object; workers re-read live state. */
export interface ObjectKey {
  kind: ObjectKind;
  /** '' for the cluster-scoped ImageList. */
  namespace: string;
  name: string;
}

/** A timer job's payload: which object to reconcile, why, and when (epoch ms). */
export interface TimerData {
  key: ObjectKey;
  reason: string;
  dueAt: number;
}

// DNS-1123 label (namespaces) and subdomain (object names): lower case alphanumerics, '-' and '.'.
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Timer reasons are short machine words: they become part of a job id. */
const REASON = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A malformed job payload: no retry can fix it. */
export class InvalidKeyError extends ClassifiedError {
  override readonly name = 'InvalidKeyError';
  readonly retryClass = 'permanent';
}

/** Throws InvalidKeyError unless `key` is a well-formed object key; returns a clean copy (no extra fields). */
export function validateKey(key: ObjectKey): ObjectKey {
  const { kind, namespace, name } = key;
  if (kind !== 'App' && kind !== 'ImageList' && kind !== 'ImagePullJob') throw new InvalidKeyError(`unknown kind ${JSON.stringify(kind)}`);
  if (typeof name !== 'string' || name.length > 253 || !SUBDOMAIN.test(name)) {
    throw new InvalidKeyError(`${kind} name ${JSON.stringify(name)} is not a DNS-1123 subdomain`);
  }
  if (kind === 'ImageList' && namespace !== '') throw new InvalidKeyError('ImageList is cluster-scoped: namespace must be empty');
  if (NAMESPACED.has(kind) && (typeof namespace !== 'string' || namespace.length > 63 || !LABEL.test(namespace))) {
    throw new InvalidKeyError(`${kind} namespace ${JSON.stringify(namespace)} is not a DNS-1123 label`);
  }
  return { kind, namespace, name };
}

/**
 * The deduplication id of an object: `App.<ns>.<name>`, `ImagePullJob.<ns>.<name>` or `ImageList.<name>`. BullMQ rejects ':' in custom
 * job ids (its key separator), and Kubernetes names never contain one; '.' is unambiguous here because a
 * namespace (a DNS label) has no dots, so the first two dots of an App id delimit kind and namespace.
 */
export function dedupId(key: ObjectKey): string {
  const k = validateKey(key);
  return NAMESPACED.has(k.kind) ? `${k.kind}.${k.namespace}.${k.name}` : `ImageList.${k.name}`;
}

/** Inverse of dedupId. */
export function keyFromDedupId(id: string): ObjectKey {
  if (id.startsWith('ImageList.')) return validateKey({ kind: 'ImageList', namespace: '', name: id.slice('ImageList.'.length) });
  const match = /^(App|ImagePullJob)\.([^.]+)\.(.+)$/.exec(id);
  if (!match) throw new InvalidKeyError(`not an object id: ${JSON.stringify(id)}`);
  return validateKey({ kind: match[1] as ObjectKind, namespace: match[2] ?? '', name: match[3] ?? '' });
}

/**
 * The id of one timer of an object: `<dedupId>~<reason>`. '~' cannot occur in a Kubernetes name, so a timer
 * id never equals or prefixes an object's dedup id, and timers live on their own queue anyway.
 */
export function timerId(key: ObjectKey, reason: string): string {
  if (!REASON.test(reason)) throw new InvalidKeyError(`timer reason ${JSON.stringify(reason)} must match ${REASON.source}`);
  return `${dedupId(key)}~${reason}`;
}

/**
 * The string form of an object key, for log fields and in-memory key sets: `App <namespace>/<name>` or
 * `ImagePullJob <namespace>/<name>` or `ImageList <name>`. It is not a job id (dedupId and timerId are): it is read by people, it is not
 * validated (the watcher keys objects as the apiserver sends them), and it may contain ' ' and '/', which
 * are fine here but not in a BullMQ job id, whose form is part of the queue contract and never changes.
 */
export function formatKey(key: ObjectKey): string {
  return NAMESPACED.has(key.kind) ? `${key.kind} ${key.namespace}/${key.name}` : `ImageList ${key.name}`;
}

/** Inverse of formatKey. A namespace has no '/', so the first one ends it; the name is the rest. */
export function parseKey(text: string): ObjectKey {
  const space = text.indexOf(' ');
  const kind = text.slice(0, space);
  const rest = text.slice(space + 1);
  if (space > 0 && kind === 'ImageList') return { kind, namespace: '', name: rest };
  const slash = rest.indexOf('/');
  if (space > 0 && (kind === 'App' || kind === 'ImagePullJob') && slash >= 0) return { kind, namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  throw new InvalidKeyError(`not an object key: ${JSON.stringify(text)}`);
}
