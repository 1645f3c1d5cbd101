import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { upstreamSchemas } from './pod-template-crd.ts';
import {
  DESCRIPTION_POLICY,
  extractUpstreamSchemas,
  firstSentence,
  goModVersion,
  renderUpstreamSchemas,
  trimDescriptions,
  UPSTREAM_SCHEMA_FILE,
  UpstreamSchemaError,
} from './upstream-schema.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

describe(UPSTREAM_SCHEMA_FILE, () => {
  const text = read(`src/api/${UPSTREAM_SCHEMA_FILE}`);
  const file = upstreamSchemas();

  it('round-trips: the committed text is what the generator renders from its content', () => {
    expect(renderUpstreamSchemas(file) === text).toBe(true);
  });

  it('comes from the k8s.io/api of the Kubernetes version the sandbox builds, through the pinned controller-gen', () => {
    const crdgen = read('hack/crdgen/go.mod');
    const kubernetes = goModVersion(read('hack/k8s/go.mod'), 'k8s.io/kubernetes');
    expect(file.source).toEqual({
      'k8s.io/api': goModVersion(crdgen, 'k8s.io/api'),
      'sigs.k8s.io/controller-tools': goModVersion(crdgen, 'sigs.k8s.io/controller-tools'),
    });
    expect(kubernetes).toMatch(/^v1\.\d+\.\d+$/);
    expect(file.source['k8s.io/api']).toBe(kubernetes!.replace(/^v1\./, 'v0.'));
    expect(file.descriptions).toEqual(DESCRIPTION_POLICY);
  });

  it('holds the full PodSpec and PersistentVolumeClaim, with no free-form nodes', () => {
    const podSpec = (file.podTemplateSpec['properties'] as Record<string, Record<string, unknown>>)['spec']!;
    expect(Object.keys(podSpec['properties'] as object)).toEqual(
      expect.arrayContaining(['containers', 'volumes', 'affinity', 'tolerations', 'securityContext']),
    );
    expect(Object.keys(file.persistentVolumeClaim['properties'] as object).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(text).not.toContain('x-kubernetes-preserve-unknown-fields');
  });
});

describe('goModVersion', () => {
  const goMod = [
    'module x',
    '',
    'require k8s.io/kubernetes v1.34.4 // indirect',
    'require (',
    '\tk8s.io/api v0.34.4',
    '\tk8s.io/apimachinery v0.34.4 // indirect',
    ')',
  ].join('\n');

  it('reads single-line and block requires', () => {
    expect(goModVersion(goMod, 'k8s.io/kubernetes')).toBe('v1.34.4');
    expect(goModVersion(goMod, 'k8s.io/api')).toBe('v0.34.4');
    expect(goModVersion(goMod, 'k8s.io/apimachinery')).toBe('v0.34.4');
    expect(goModVersion(goMod, 'k8s.io/client-go')).toBeUndefined();
  });
});

describe('extractUpstreamSchemas', () => {
  const template = { type: 'object', properties: { spec: { type: 'object' } } };
  const claim = { type: 'object', properties: { spec: { type: 'object' } } };
  const crd = (spec: unknown) => ({ spec: { versions: [{ schema: { openAPIV3Schema: { properties: { spec } } } }] } });

  it('takes template and the items of volumeClaimTemplates from the spec', () => {
    const out = extractUpstreamSchemas(crd({ properties: { template, volumeClaimTemplates: { type: 'array', items: claim } } }));
    expect(out).toEqual({ podTemplateSpec: template, persistentVolumeClaim: claim });
  });

  it('names what is missing', () => {
    expect(() => extractUpstreamSchemas(crd({ properties: { template } }))).toThrow(UpstreamSchemaError);
    expect(() => extractUpstreamSchemas(crd({ properties: { template } }))).toThrow('spec.properties.volumeClaimTemplates is missing');
    expect(() => extractUpstreamSchemas({ spec: { versions: [] } })).toThrow('exactly one version');
  });
});

describe('trimDescriptions', () => {
  const d = (depth: number) => `Field at depth ${depth}. More words here.\nMore info: https://example.com`;
  const schema = {
    description: d(0),
    type: 'object',
    properties: {
      spec: {
        description: d(1),
        type: 'object',
        properties: {
          list: {
            description: d(2),
            type: 'array',
            items: { description: d(2), type: 'object', properties: { leaf: { description: d(3), type: 'string' } } },
          },
        },
      },
    },
  };

  it('keeps whole descriptions down to fullDepth, the first sentence to sentenceDepth, and none deeper', () => {
    const out = trimDescriptions(schema, { fullDepth: 1, sentenceDepth: 2 }) as typeof schema;
    expect(out.description).toBe(d(0));
    expect(out.properties.spec.description).toBe(d(1));
    expect(out.properties.spec.properties.list.description).toBe('Field at depth 2.');
    expect(out.properties.spec.properties.list.items.description).toBe('Field at depth 2.');
    expect(out.properties.spec.properties.list.items.properties.leaf).toEqual({ type: 'string' });
    expect(schema.properties.spec.properties.list.items.properties.leaf.description).toBe(d(3));
  });
});

describe('firstSentence', () => {
  it.each([
    ['Compute Resources required by this container.\nCannot be updated.', 'Compute Resources required by this container.'],
    ['Name of the\ncontainer specified as a DNS_LABEL.', 'Name of the container specified as a DNS_LABEL.'],
    ['Value of 1.5 means more. Next.', 'Value of 1.5 means more.'],
    ['No period at all', 'No period at all'],
  ])('%j → %j', (text, sentence) => {
    expect(firstSentence(text)).toBe(sentence);
  });
});
