/**
 * The media types of the apiserver's protobuf encoding, apart from the decoder, so that the client can negotiate
 * without loading protobufjs.
 */

/** The media type of the apiserver's protobuf encoding (built-in types only; custom resources are JSON). */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** Protobuf when the server speaks it, JSON otherwise (an older server or a proxy that does not). */
export const ACCEPT_PROTOBUF = `${PROTOBUF}, application/json`;

export const isProtobuf = (contentType: string | null): boolean => contentType !== null && contentType.trim().toLowerCase().startsWith(PROTOBUF);

/** A protobuf answer that is not what ebb can read. */
export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
}
