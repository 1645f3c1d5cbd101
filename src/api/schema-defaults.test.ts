import { describe, expect, it } from 'vitest';
import { applyDefaults } from './schema-defaults.ts';
import { upstreamSchemas } from './pod-template-crd.ts';

describe('applyDefaults', () => {
  it('fills missing defaulted properties, in list items and map values, and leaves set values alone', () => {
    const schema = {
      type: 'object',
      properties: {
        ports: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } } },
        byName: { type: 'object', additionalProperties: { type: 'object', properties: { weight: { type: 'integer', default: 1 } } } },
      },
    };
    const input = { ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }], byName: { a: {}, b: { weight: 5 } } };
    expect(applyDefaults(schema, input)).toEqual({
      ports: [
        { port: 80, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
      ],
      byName: { a: { weight: 1 }, b: { weight: 5 } },
    });
    expect(input.ports[0]).toEqual({ port: 80 });
  });

  it('with the generated pod template schema, a container port gets protocol TCP as the apiserver would', () => {
    const template = { spec: { containers: [{ name: 'main', image: 'web:1', ports: [{ containerPort: 8080 }] }] } };
    const defaulted = applyDefaults(upstreamSchemas().podTemplateSpec, template) as typeof template & {
      spec: { containers: { ports: { protocol?: string }[] }[] };
    };
    expect(defaulted.spec.containers[0]?.ports[0]?.protocol).toBe('TCP');
  });
});
