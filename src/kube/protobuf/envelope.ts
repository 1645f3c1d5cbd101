/**
 * The apiserver's protobuf answers: the 4-byte magic `k8s\0`, then a runtime.Unknown whose `raw` is the
 * encoded object and whose typeMeta names it. Errors come back the same way, as a metav1.Status.
 */
import type { ListResult, Pod, Stored } from '../types.ts';
import { decodeAs } from './codec.ts';
import { ProtobufError } from './media.ts';

export { ACCEPT_PROTOBUF, isProtobuf, PROTOBUF, ProtobufError } from './media.ts';

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

interface Unwrapped {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
}

interface UnknownMessage {
  typeMeta?: { apiVersion?: string; kind?: string };
  raw?: Uint8Array;
  contentEncoding?: string;
}

/** The object inside the envelope, with its apiVersion and kind. */
export function unwrap(body: Uint8Array): Unwrapped {
  if (body.length < MAGIC.length || MAGIC.some((b, i) => body[i] !== b)) throw new ProtobufError('protobuf answer without the k8s magic prefix');
  const u = decodeAs<UnknownMessage>('Unknown', body.subarray(MAGIC.length));
  if (u.contentEncoding) throw new ProtobufError(`protobuf answer with content encoding ${u.contentEncoding}`);
  return { apiVersion: u.typeMeta?.apiVersion ?? '', kind: u.typeMeta?.kind ?? '', raw: u.raw ?? new Uint8Array() };
}

function unwrapKind(body: Uint8Array, kind: string): Unwrapped {
  const u = unwrap(body);
  if (u.kind !== kind) throw new ProtobufError(`expected a ${kind} in the protobuf answer, got ${u.kind || 'nothing'}`);
  return u;
}

/** A Pod as GET returns it in JSON (with apiVersion and kind), for the fields `pod.proto` declares. */
export function decodePod(body: Uint8Array): Stored<Pod> {
  const u = unwrapKind(body, 'Pod');
  return { apiVersion: u.apiVersion, kind: u.kind, ...decodeAs<Stored<Pod>>('Pod', u.raw) };
}

/** A PodList as LIST returns it in JSON (items carry no apiVersion and kind), for the fields `pod.proto` declares. */
export function decodePodList(body: Uint8Array): ListResult<Stored<Pod>> & { apiVersion: string; kind: string } {
  const u = unwrapKind(body, 'PodList');
  const list = decodeAs<Partial<ListResult<Stored<Pod>>>>('PodList', u.raw);
  return { apiVersion: u.apiVersion, kind: u.kind, metadata: (list.metadata ?? {}) as ListResult<Stored<Pod>>['metadata'], items: list.items ?? [] };
}

/** An error answer's metav1.Status (reason and message), or undefined when the body is not one. */
export function decodeStatus(body: Uint8Array): { reason?: string; message?: string; code?: number } | undefined {
  try {
    const u = unwrap(body);
    return u.kind === 'Status' ? decodeAs('Status', u.raw) : undefined;
  } catch {
    return undefined;
  }
}
