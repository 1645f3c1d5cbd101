/**
 * Turns a TypeBox schema into a structural OpenAPI v3 schema for a CustomResourceDefinition: drops TypeBox's
 * symbol keys and `$id`, rewrites TypeBox idioms (literal unions → enum, records → additionalProperties),
 * and refuses anything a structural schema may not contain, naming the path. Output keys are sorted so the
 * generated YAML is stable.
 */
import type { TSchema } from '@sinclair/typebox';
import { isRecord } from '../common/guards.ts';

export type JSONSchemaProps = { [key: string]: unknown };

export class StructuralSchemaError extends Error {
  override readonly name = 'StructuralSchemaError';
}

/** Keys that exist only for TypeBox or JSON Schema tooling. */
const DROPPED = new Set(['$id', '$schema', 'title', 'examples']);
/** Keys a structural schema may not use (or that ebb never needs). */
const FORBIDDEN = new Set(['oneOf', 'allOf', 'not', '$ref', 'const', 'patternProperties', 'additionalItems', 'dependencies', 'definitions', '$defs']);
const RECORD_KEY_PATTERN = '^(.*)$';

type Node = Record<string, unknown>;

function fail(path: string, what: string): never {
  throw new StructuralSchemaError(`${path || '<root>'}: ${what}`);
}

/** `anyOf: [{const: 'A'}, {const: 'B'}]` (TypeBox's literal union) or a single `const` → `enum`. */
function literalUnionToEnum(node: Node, path: string): void {
  if (typeof node['const'] === 'string') {
    node['type'] = 'string';
    node['enum'] = [node['const']];
    delete node['const'];
    return;
  }
  const anyOf = node['anyOf'];
  if (!Array.isArray(anyOf) || !anyOf.every((s) => isRecord(s) && typeof s['const'] === 'string')) return;
  if (node['type'] !== undefined) fail(path, 'literal union with an explicit type');
  node['type'] = 'string';
  node['enum'] = anyOf.map((s: Node) => s['const']);
  delete node['anyOf'];
}

/** TypeBox's `Record(String, X)` → `additionalProperties: X`. */
function recordToAdditionalProperties(node: Node, path: string): void {
  const pp = node['patternProperties'];
  if (!isRecord(pp)) return;
  const keys = Object.keys(pp);
  if (keys.length !== 1 || keys[0] !== RECORD_KEY_PATTERN) fail(path, 'patternProperties other than a string-keyed record');
  node['additionalProperties'] = pp[RECORD_KEY_PATTERN];
  delete node['patternProperties'];
}

function checkIntOrString(node: Node, path: string): void {
  const anyOf = node['anyOf'];
  if (anyOf === undefined) return;
  const ok =
    node['x-kubernetes-int-or-string'] === true &&
    Array.isArray(anyOf) &&
    anyOf.length === 2 &&
    isRecord(anyOf[0]) &&
    isRecord(anyOf[1]) &&
    anyOf[0]['type'] === 'integer' &&
    anyOf[1]['type'] === 'string';
  if (!ok) fail(path, 'anyOf is only allowed as the int-or-string pattern');
}

function checkNode(node: Node, path: string): void {
  for (const key of Object.keys(node)) if (FORBIDDEN.has(key)) fail(path, `"${key}" is not allowed in a structural schema`);
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (node['type'] === undefined && !intOrString && !preserve) fail(path, 'every node needs a type');
  if (intOrString && node['type'] !== undefined) fail(path, 'int-or-string nodes have no type');
  if (node['properties'] !== undefined && node['additionalProperties'] !== undefined) fail(path, 'properties and additionalProperties are exclusive');
  if (node['type'] === 'array' && !isRecord(node['items'])) fail(path, 'arrays need a single items schema');
  checkListMap(node, path);
}

function checkListMap(node: Node, path: string): void {
  if (node['x-kubernetes-list-type'] !== 'map') return;
  const keys = node['x-kubernetes-list-map-keys'];
  const items = node['items'];
  if (!Array.isArray(keys) || keys.length === 0 || !isRecord(items)) fail(path, 'a list-map needs x-kubernetes-list-map-keys and object items');
  const required = Array.isArray(items['required']) ? (items['required'] as unknown[]) : [];
  const props = isRecord(items['properties']) ? items['properties'] : {};
  for (const key of keys as unknown[]) {
    const prop = props[String(key)];
    if (!isRecord(prop)) fail(path, `list-map key "${String(key)}" is not a property of the items`);
    if (!required.includes(key) && prop['default'] === undefined) fail(path, `list-map key "${String(key)}" must be required or defaulted`);
  }
}

function convertNode(input: unknown, path: string): Node {
  if (!isRecord(input)) fail(path, 'schema node is not an object');
  const node: Node = {};
  for (const [k, v] of Object.entries(input)) if (!DROPPED.has(k)) node[k] = v;
  literalUnionToEnum(node, path);
  recordToAdditionalProperties(node, path);
  checkIntOrString(node, path);
  checkNode(node, path);
  const out: Node = {};
  for (const key of Object.keys(node).sort()) out[key] = convertChild(key, node[key], path);
  return out;
}

function convertChild(key: string, value: unknown, path: string): unknown {
  switch (key) {
    case 'properties': {
      const props = value as Node;
      const out: Node = {};
      for (const name of Object.keys(props).sort()) out[name] = convertNode(props[name], `${path}.${name}`);
      return out;
    }
    case 'items':
      return convertNode(value, `${path}[]`);
    case 'additionalProperties':
      return isRecord(value) ? convertNode(value, `${path}{}`) : value;
    case 'anyOf':
      return (value as unknown[]).map((s, i) => convertNode(s, `${path}<anyOf ${i}>`));
    default:
      return structuredClone(value);
  }
}

/** The structural OpenAPI v3 form of a TypeBox schema (or a plain schema, checked and key-sorted). Throws StructuralSchemaError naming the offending path. */
export function toStructural(schema: TSchema | JSONSchemaProps, path = ''): JSONSchemaProps {
  return convertNode(schema, path);
}
