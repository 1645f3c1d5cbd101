/**
 * TypeBox building blocks for Kubernetes-flavoured schemas. Each helper produces a TypeBox schema whose static
 * type is what the apiserver returns, and which `structural.ts` turns into a structural OpenAPI v3 node.
 */
import {
  Type,
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type TLiteral,
  type TObject,
  type TProperties,
  type TRecord,
  type TSchema,
  type TString,
  type TUnion,
  type TInteger,
  type ArrayOptions,
  type TArray,
} from '@sinclair/typebox';

/** One CEL rule (`x-kubernetes-validations` entry). */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** Options accepted by every helper: the Kubernetes extensions we use, typed. */
export interface KubeOptions extends SchemaOptions {
  'x-kubernetes-validations'?: CelRule[];
}

/** Object options with the Kubernetes extensions we use. */
export interface KubeObjectOptions extends ObjectOptions {
  'x-kubernetes-validations'?: CelRule[];
}

export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const DNS_LABEL_MAX_LENGTH = 63;
/** A label value: empty, or up to 63 alphanumerics with `-`, `_`, `.` inside. */
export const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
/** A label key: optional DNS-subdomain prefix (≤253) + `/` + name (≤63). */
export const LABEL_KEY_MAX_LENGTH = 317;
/** Keeps CEL cost estimates of rules that walk label maps small; far above what pods carry in practice. */
export const LABELS_MAX_PROPERTIES = 256;
/** CEL `matches` pattern for a percentage from 1% to 100%. */
export const PERCENT_1_TO_100_CEL = '^(100|[1-9][0-9]?)%$';

export const int32 = (opts: KubeOptions = {}): TInteger => Type.Integer({ format: 'int32', ...opts });
export const int64 = (opts: KubeOptions = {}): TInteger => Type.Integer({ format: 'int64', ...opts });
export const dateTime = (opts: KubeOptions = {}): TString => Type.String({ format: 'date-time', ...opts });

export function dnsLabel(description: string, opts: KubeOptions = {}): TString {
  return Type.String({ description, minLength: 1, maxLength: DNS_LABEL_MAX_LENGTH, pattern: DNS_LABEL_PATTERN, ...opts });
}

/** A string enumeration; emitted as `{type: string, enum: [...]}`. */
export function stringEnum<const T extends string>(values: readonly T[], opts: KubeOptions = {}): TUnion<Array<TLiteral<T>>> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    opts,
  );
}

/** `map[string]string`; emitted as `{type: object, additionalProperties: {type: string}}`. */
export function stringMap(opts: ObjectOptions = {}, values: TString = Type.String()): TRecord<TString, TString> {
  return Type.Record(Type.String(), values, opts);
}

/** A label key's name part (after the optional `prefix/`): 1..63 alphanumerics with `-`, `_`, `.` inside. */
const LABEL_NAME_PATTERN = '[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
// `[.]`, not an escaped dot: the pattern sits in a CEL string literal, where `\.` is no valid escape.
const DNS_SUBDOMAIN_PATTERN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
/** CEL `matches` pattern for a label key: an optional DNS subdomain and `/`, then the name. */
export const LABEL_KEY_CEL_PATTERN = `^(${DNS_SUBDOMAIN_PATTERN}/)?${LABEL_NAME_PATTERN}$`;
/** The CEL rule a label map's keys obey (the apiserver's own rule for labels): keys are not otherwise typed. */
export const labelKeysRule: CelRule = {
  rule: `self.all(k, k.size() <= ${LABEL_KEY_MAX_LENGTH} && k.matches('${LABEL_KEY_CEL_PATTERN}') && k.indexOf('/') <= 253)`,
  message:
    "label keys must be an optional DNS subdomain prefix of at most 253 characters and '/', then a name of at most 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit",
};

/**
 * Label map: values by pattern, keys by a CEL rule, so a label the apiserver would refuse on the pods, claims
 * or revisions ebb makes from it is refused when the App is written instead.
 */
export function labelMap(description: string): TRecord<TString, TString> {
  return stringMap(
    { description, maxProperties: LABELS_MAX_PROPERTIES, 'x-kubernetes-validations': [labelKeysRule] },
    Type.String({ maxLength: DNS_LABEL_MAX_LENGTH, pattern: LABEL_VALUE_PATTERN }),
  );
}

/** Kubernetes `IntOrString`: `anyOf: [integer, string]` with `x-kubernetes-int-or-string: true`. */
export function intOrString(opts: KubeOptions = {}): TUnion<[TInteger, TString]> {
  return Type.Union([Type.Integer(), Type.String()], { ...opts, 'x-kubernetes-int-or-string': true });
}

/** An object whose declared fields are typed and whose other fields are kept as they are. */
export interface TOpenObject<T extends TProperties> extends TObject<T> {
  static: Static<TObject<T>, this['params']> & { [key: string]: unknown };
}

export function openObject<T extends TProperties>(properties: T, opts: ObjectOptions = {}): TOpenObject<T> {
  // Only the static type differs from TObject<T> (it gains an index signature), so no cast is needed.
  return Type.Object(properties, { ...opts, 'x-kubernetes-preserve-unknown-fields': true });
}

/**
 * An object of a Kubernetes type whose full schema comes from k8s.io/api (`upstream-schema.ts`): the
 * properties declare only what ebb reads or constrains further, and are laid over the upstream schema when
 * the CRD is rendered. The static type carries the other fields through, as for `openObject`.
 */
export function upstreamObject<T extends TProperties>(properties: T, opts: ObjectOptions = {}): TOpenObject<T> {
  return Type.Object(properties, opts);
}

/** A list-map: items are unique by the given scalar keys, and server-side apply merges by them. */
export function listMap<T extends TSchema>(items: T, keys: string[], opts: ArrayOptions = {}): TArray<T> {
  return Type.Array(items, { ...opts, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys });
}
