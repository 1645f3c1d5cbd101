/**
 * Lays ebb's own schema of an embedded Kubernetes type over the upstream schema of that type: the result is
 * the upstream schema with ebb's extra constraints (bounds, patterns, enums, required fields, CEL rules) and
 * ebb's descriptions where ebb documents a field. A pure function over structural schema nodes.
 */
import { isRecord } from '../common/guards.ts';
import type { JSONSchemaProps } from './structural.ts';

export class SchemaOverlayError extends Error {
  override readonly name = 'SchemaOverlayError';
}

export interface OverlayOptions {
  /**
   * Paths of fields ebb declares that the upstream type lacks (e.g. `.metadata.creationTimestamp` of an
   * embedded ObjectMeta). Any other field missing upstream is an error, so a typo in ebb's schema cannot
   * silently add a field.
   */
  extraFields?: ReadonlySet<string>;
}

/** Keys whose overlay value is merged rather than replacing the upstream one. */
type Merger = (base: unknown, overlay: unknown, path: string, opts: OverlayOptions) => unknown;

function fail(path: string, what: string): never {
  throw new SchemaOverlayError(`${path || '<root>'}: ${what}`);
}

function asNode(value: unknown, path: string): JSONSchemaProps {
  if (!isRecord(value)) fail(path, 'schema node is not an object');
  return value;
}

function mergeProperties(base: unknown, overlay: unknown, path: string, opts: OverlayOptions): JSONSchemaProps {
  const upstream = isRecord(base) ? base : {};
  const out: JSONSchemaProps = structuredClone(upstream);
  for (const [name, schema] of Object.entries(asNode(overlay, path))) {
    const at = `${path}.${name}`;
    const prop = upstream[name];
    if (prop !== undefined) out[name] = overlaySchema(asNode(prop, at), asNode(schema, at), at, opts);
    else if (opts.extraFields?.has(at)) out[name] = structuredClone(schema);
    else fail(at, 'the upstream type has no such field');
  }
  return out;
}

function mergeSchema(suffix: string): Merger {
  return (base, overlay, path, opts) => {
    if (!isRecord(base)) fail(path, `the upstream node has no ${suffix === '[]' ? 'items' : 'additionalProperties'} schema`);
    return overlaySchema(base, asNode(overlay, path), `${path}${suffix}`, opts);
  };
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);

function mergeRequired(base: unknown, overlay: unknown): string[] {
  return [...new Set([...list(base), ...list(overlay)].map(String))];
}

function mergeRules(base: unknown, overlay: unknown): unknown[] {
  return [...list(base), ...list(overlay)].map((r) => structuredClone(r));
}

function mergeType(base: unknown, overlay: unknown, path: string): unknown {
  if (base !== undefined && base !== overlay) fail(path, `type ${JSON.stringify(overlay)} differs from the upstream type ${JSON.stringify(base)}`);
  return overlay;
}

const MERGERS: Record<string, Merger> = {
  type: (b, o, p) => mergeType(b, o, p),
  properties: mergeProperties,
  items: mergeSchema('[]'),
  additionalProperties: mergeSchema('{}'),
  required: (b, o) => mergeRequired(b, o),
  'x-kubernetes-validations': (b, o) => mergeRules(b, o),
};

/**
 * `base` with `overlay` laid over it. Properties, items and additionalProperties merge recursively; `type`
 * must agree; `required` is the union and CEL rules are concatenated (upstream first); any other key of the
 * overlay (description, bounds, pattern, enum, list type) replaces the upstream value. Throws
 * SchemaOverlayError naming the path when the overlay does not fit the upstream type.
 */
export function overlaySchema(base: JSONSchemaProps, overlay: JSONSchemaProps, path = '', opts: OverlayOptions = {}): JSONSchemaProps {
  const out: JSONSchemaProps = structuredClone(base);
  for (const [key, value] of Object.entries(overlay)) {
    const merge = MERGERS[key];
    out[key] = merge ? merge(base[key], value, path, opts) : structuredClone(value);
  }
  return out;
}
