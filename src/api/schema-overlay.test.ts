import { describe, expect, it } from 'vitest';
import { overlaySchema, SchemaOverlayError } from './schema-overlay.ts';

const upstream = {
  description: 'A container.',
  type: 'object',
  required: ['name'],
  properties: {
    name: { description: 'Name.', type: 'string' },
    image: { description: 'Image.', type: 'string' },
    ports: { type: 'array', items: { type: 'object', properties: { containerPort: { type: 'integer', format: 'int32' } } } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
  },
  'x-kubernetes-validations': [{ rule: 'upstream' }],
};

describe('overlaySchema', () => {
  it('adds bounds, patterns, required fields and rules, and replaces descriptions ebb gives', () => {
    const out = overlaySchema(upstream, {
      description: 'An ebb container.',
      type: 'object',
      required: ['name', 'image'],
      properties: {
        image: { type: 'string', pattern: '^x$', description: 'Reference.' },
        ports: { type: 'array', maxItems: 4, items: { type: 'object', properties: { containerPort: { type: 'integer', minimum: 1 } } } },
        env: { type: 'object', maxProperties: 8, additionalProperties: { type: 'string', maxLength: 10 } },
      },
      'x-kubernetes-validations': [{ rule: 'ebb' }],
    });
    expect(out).toEqual({
      description: 'An ebb container.',
      type: 'object',
      required: ['name', 'image'],
      properties: {
        name: { description: 'Name.', type: 'string' },
        image: { description: 'Reference.', type: 'string', pattern: '^x$' },
        ports: { type: 'array', maxItems: 4, items: { type: 'object', properties: { containerPort: { type: 'integer', format: 'int32', minimum: 1 } } } },
        env: { type: 'object', maxProperties: 8, additionalProperties: { type: 'string', maxLength: 10 } },
      },
      'x-kubernetes-validations': [{ rule: 'upstream' }, { rule: 'ebb' }],
    });
  });

  it('leaves the upstream schema untouched', () => {
    const before = structuredClone(upstream);
    overlaySchema(upstream, { properties: { name: { type: 'string', maxLength: 3 } } });
    expect(upstream).toEqual(before);
  });

  it.each([
    ['a field upstream lacks', { properties: { imagePullPolizy: { type: 'string' } } }, '.c.imagePullPolizy: the upstream type has no such field'],
    ['another type', { properties: { name: { type: 'integer' } } }, '.c.name: type "integer" differs from the upstream type "string"'],
    ['items on a non-list', { properties: { name: { items: { type: 'string' } } } }, '.c.name: the upstream node has no items schema'],
  ])('refuses %s, naming the path', (_what, overlay, message) => {
    expect(() => overlaySchema(upstream, overlay, '.c')).toThrow(SchemaOverlayError);
    expect(() => overlaySchema(upstream, overlay, '.c')).toThrow(message);
  });

  it('adds a field upstream lacks only when it is listed as an extra field', () => {
    const out = overlaySchema(upstream, { properties: { creationTimestamp: { type: 'string' } } }, '.c', { extraFields: new Set(['.c.creationTimestamp']) });
    expect((out['properties'] as Record<string, unknown>)['creationTimestamp']).toEqual({ type: 'string' });
  });
});
