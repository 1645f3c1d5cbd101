/**
 * Structural defaulting, as the apiserver applies a CRD schema's `default`s when it reads or writes an
 * object: a property missing from an object gets its default; present values are walked into (properties,
 * list items, map values). Pure; the input is not changed.
 */
import { isRecord } from '../common/guards.ts';
import type { JSONSchemaProps } from './structural.ts';

const schemaAt = (node: unknown): JSONSchemaProps | undefined => (isRecord(node) ? node : undefined);

export function applyDefaults(schema: JSONSchemaProps, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schemaAt(schema['items']);
    return items ? value.map((v) => applyDefaults(items, v)) : value;
  }
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = { ...value };
  const properties = schemaAt(schema['properties']);
  const additional = schemaAt(schema['additionalProperties']);
  for (const [key, child] of Object.entries(properties ?? {})) {
    const childSchema = schemaAt(child);
    if (!childSchema) continue;
    if (out[key] === undefined && childSchema['default'] !== undefined) out[key] = structuredClone(childSchema['default']);
    if (out[key] !== undefined) out[key] = applyDefaults(childSchema, out[key]);
  }
  if (additional) for (const key of Object.keys(out)) if (!properties || !(key in properties)) out[key] = applyDefaults(additional, out[key]);
  return out;
}
