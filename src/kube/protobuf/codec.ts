/**
 * Decodes the apiserver's protobuf encoding (`application/vnd.kubernetes.protobuf`) into the objects its JSON
 * encoding yields, for the messages and fields `pod.proto` declares. The JSON encoding prints a field by its Go
 * type and tag, the protobuf encoding writes every non-pointer field and every set pointer; the rules below
 * bridge the two:
 * - a scalar is printed when not zero, unless it is listed in ALWAYS (no `omitempty`: printed even when zero)
 *   or POINTER (a pointer: printed when set, zero or not);
 * - a message is printed when it was sent (non-pointer structs are always sent, and always printed);
 * - a list or map is printed when not empty;
 * - metav1.Time is an RFC 3339 string in UTC, to the second, and `null` when zero (`creationTimestamp` is
 *   left out when zero); resource.Quantity is its canonical string; int64 is a number.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Protobufjs from 'protobufjs';
import type { Field, Root, Type } from 'protobufjs';

type Protobuf = typeof Protobufjs;
let lib: Protobuf | undefined;
/** protobufjs, loaded at the first decode: processes that read no protobuf never load it. */
const protobuf = (): Protobuf => (lib ??= createRequire(import.meta.url)('protobufjs') as Protobuf);

/** The proto file ships next to this module (the build copies `*.proto` files along with the JS). */
export const POD_PROTO = path.join(import.meta.dirname, 'pod.proto');

/** Scalars printed even when zero (no `omitempty`), by message. */
const ALWAYS: Readonly<Record<string, readonly string[]>> = {
  OwnerReference: ['apiVersion', 'kind', 'name', 'uid'],
  Container: ['name'],
  ContainerResizePolicy: ['resourceName', 'restartPolicy'],
  VolumeMount: ['name', 'mountPath'],
  VolumeMountStatus: ['name', 'mountPath'],
  Volume: ['name'],
  PersistentVolumeClaimVolumeSource: ['claimName'],
  PodReadinessGate: ['conditionType'],
  PodCondition: ['type', 'status'],
  ContainerStatus: ['name', 'ready', 'restartCount', 'image', 'imageID'],
  ContainerStateTerminated: ['exitCode'],
  IP: ['ip'],
};

/** Pointer scalars: printed whenever set. */
const POINTER: Readonly<Record<string, readonly string[]>> = {
  OwnerReference: ['controller', 'blockOwnerDeletion'],
  ObjectMeta: ['deletionGracePeriodSeconds'],
  ListMeta: ['remainingItemCount'],
  PodSpec: ['terminationGracePeriodSeconds'],
  Container: ['restartPolicy'],
  VolumeMount: ['recursiveReadOnly'],
  VolumeMountStatus: ['recursiveReadOnly'],
  ContainerStatus: ['started'],
};

/** Struct fields whose JSON fields sit in the parent (`json:",inline"`). */
const INLINE: Readonly<Record<string, readonly string[]>> = { Volume: ['volumeSource'] };

/** Time fields left out when zero (`omitzero`) rather than printed as null. */
const OMIT_ZERO_TIME: Readonly<Record<string, readonly string[]>> = { ObjectMeta: ['creationTimestamp'] };

const LONGS = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

type Message = Record<string, unknown>;
type Json = Record<string, unknown>;
type Convert = (msg: Message) => Json;

const has = (msg: Message, key: string): boolean => Object.prototype.hasOwnProperty.call(msg, key);

/** A protobuf int64 (a Long when the long library is loaded) as a number; Kubernetes' int64s fit in 2^53. */
function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'object' && v !== null && 'toNumber' in v && typeof v.toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  return Number(v);
}

/** Recent times printed (a list repeats the same few: creation, conditions, container starts); cleared when full. */
const printed = new Map<number, string>();
const PRINTED_MAX = 4096;

/** metav1.Time as the apiserver prints it: `2026-01-02T03:04:05Z`, null when zero. */
export function timeString(msg: Message): string | null {
  if (!has(msg, 'seconds')) return null;
  const seconds = toNumber(msg['seconds']);
  let text = printed.get(seconds);
  if (text === undefined) {
    text = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (printed.size >= PRINTED_MAX) printed.clear();
    printed.set(seconds, text);
  }
  return text;
}

const quantityString = (msg: Message): string => (typeof msg['string'] === 'string' ? msg['string'] : '0');

const isZero = (v: unknown): boolean => v === '' || v === 0 || v === false || v === undefined || v === null;

const converters = new Map<string, Convert>();

/** How one field becomes JSON: writes into `out` what the JSON encoding would print. */
type FieldStep = (msg: Message, out: Json) => void;

function valueConverter(field: Field): (v: unknown) => unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf().Type) {
    if (resolved.name === 'Time') return (v) => timeString(v as Message);
    if (resolved.name === 'Quantity') return (v) => quantityString(v as Message);
    const convert = converterFor(resolved);
    return (v) => convert(v as Message);
  }
  return LONGS.has(field.type) ? toNumber : (v) => v;
}

function fieldStep(owner: string, field: Field): FieldStep {
  const key = field.name;
  const value = valueConverter(field);
  if (field.map) {
    const identity = !(field.resolvedType instanceof protobuf().Type);
    return (msg, out) => {
      const m = msg[key] as Record<string, unknown> | undefined;
      if (!m) return;
      const keys = Object.keys(m);
      if (keys.length === 0) return;
      if (identity) out[key] = m;
      else {
        const o: Json = {};
        for (const k of keys) o[k] = value(m[k]);
        out[key] = o;
      }
    };
  }
  if (field.repeated) {
    const identity = !(field.resolvedType instanceof protobuf().Type) && !LONGS.has(field.type);
    return (msg, out) => {
      const a = msg[key] as unknown[] | undefined;
      if (a && a.length > 0) out[key] = identity ? a : a.map(value);
    };
  }
  if (field.resolvedType instanceof protobuf().Type) {
    if (INLINE[owner]?.includes(key)) {
      const convert = converterFor(field.resolvedType);
      return (msg, out) => {
        if (has(msg, key)) Object.assign(out, convert(msg[key] as Message));
      };
    }
    const omitZero = OMIT_ZERO_TIME[owner]?.includes(key) ?? false;
    return (msg, out) => {
      if (!has(msg, key)) return;
      const v = value(msg[key]);
      if (v !== null || !omitZero) out[key] = v;
    };
  }
  if (POINTER[owner]?.includes(key)) {
    return (msg, out) => {
      if (has(msg, key)) out[key] = value(msg[key]);
    };
  }
  const always = ALWAYS[owner]?.includes(key) ?? false;
  const zero = field.type === 'string' ? '' : field.type === 'bool' ? false : 0;
  return (msg, out) => {
    const v = has(msg, key) ? value(msg[key]) : zero;
    if (always || !isZero(v)) out[key] = v;
  };
}

/** The converter of messages of `type` (built once per type; recursive types resolve lazily). */
function converterFor(type: Type): Convert {
  const cached = converters.get(type.fullName);
  if (cached) return cached;
  let steps: FieldStep[] | undefined;
  const convert: Convert = (msg) => {
    steps ??= type.fieldsArray.map((f) => fieldStep(type.name, f));
    const out: Json = {};
    for (const step of steps) step(msg, out);
    return out;
  };
  converters.set(type.fullName, convert);
  return convert;
}

let root: Root | undefined;
const types = new Map<string, Type>();

/** Message `name` of `pod.proto` (loaded once). */
export function messageType(name: string): Type {
  let type = types.get(name);
  if (type) return type;
  if (!root) {
    root = protobuf().loadSync(POD_PROTO);
    root.resolveAll();
  }
  type = root.lookupType(`ebb.kube.${name}`);
  types.set(name, type);
  return type;
}

/** Decodes message `name` from `bytes` into the object the JSON encoding yields. */
export function decodeAs<T>(name: string, bytes: Uint8Array): T {
  const type = messageType(name);
  return converterFor(type)(type.decode(bytes) as unknown as Message) as T;
}
