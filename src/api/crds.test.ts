import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { CRD_DIR, renderCrdFiles } from './crd-files.ts';
import { appCrd, imageListCrd, imagePullJobCrd, type CustomResourceDefinition } from './crds.ts';
import { intOrString, listMap, openObject, stringEnum, stringMap } from './schema-kit.ts';
import { toStructural, StructuralSchemaError, type JSONSchemaProps } from './structural.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The apiserver limits an object's annotations to 256 KiB in total; 32 KiB stay free for other annotations. */
const CRD_APPLY_BUDGET_BYTES = 224 * 1024;

describe('deploy/crds', () => {
  it.each([...renderCrdFiles().keys()])('%s matches the schemas in src/api (run `make crds` after changing them)', (file) => {
    const path = join(ROOT, CRD_DIR, file);
    expect(existsSync(path), `${CRD_DIR}/${file} is missing: run \`make crds\``).toBe(true);
    const committed = readFileSync(path, 'utf8');
    expect(committed === renderCrdFiles().get(file), `${CRD_DIR}/${file} is out of date: run \`make crds\` and commit the result`).toBe(true);
  });
});

function schemaOf(crd: CustomResourceDefinition): JSONSchemaProps {
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
}

/** Every node in a schema with its path. */
function* walk(node: unknown, path = ''): Generator<[string, JSONSchemaProps]> {
  if (typeof node !== 'object' || node === null) return;
  const n = node as JSONSchemaProps;
  yield [path, n];
  for (const [name, child] of Object.entries((n['properties'] as JSONSchemaProps | undefined) ?? {})) yield* walk(child, `${path}.${name}`);
  if (n['items']) yield* walk(n['items'], `${path}[]`);
  if (typeof n['additionalProperties'] === 'object') yield* walk(n['additionalProperties'], `${path}{}`);
}

describe('App CRD', () => {
  const crd = appCrd();
  const version = crd.spec.versions[0]!;

  it('serves apps.ebb.dev/v1alpha1 App, namespaced, short name ebapp', () => {
    expect(crd.metadata.name).toBe('apps.apps.ebb.dev');
    expect(crd.spec).toMatchObject({
      group: 'apps.ebb.dev',
      scope: 'Namespaced',
      names: { kind: 'App', plural: 'apps', shortNames: ['ebapp'], categories: ['ebb'] },
    });
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true });
  });

  it('has the status and scale subresources', () => {
    expect(version.subresources).toEqual({
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
    });
  });

  it('prints DESIRED, READY, UPDATED, AVAILABLE, REVISION, PAUSED, HELD, AGE', () => {
    expect(version.additionalPrinterColumns.map((c) => c.name.toUpperCase())).toEqual([
      'DESIRED',
      'READY',
      'UPDATED',
      'AVAILABLE',
      'REVISION',
      'PAUSED',
      'HELD',
      'AGE',
    ]);
  });

  it('gives every schema node a type, except int-or-string nodes', () => {
    for (const [path, node] of walk(schemaOf(crd))) {
      if (node['x-kubernetes-int-or-string'] === true) expect(node['anyOf'], path).toEqual([{ type: 'integer' }, { type: 'string' }]);
      else expect(node['type'], path).toBeTypeOf('string');
      expect(node['properties'] !== undefined && node['additionalProperties'] !== undefined, path).toBe(false);
    }
  });

  it('keeps unknown fields nowhere: the pod template and claim templates are typed field by field', () => {
    const preserved = [...walk(schemaOf(crd))].filter(([, n]) => n['x-kubernetes-preserve-unknown-fields'] === true).map(([p]) => p);
    expect(preserved).toEqual([]);
  });

  it('types the pod template with the core/v1 schema: quantities, ports, probes, volumes', () => {
    const nodes = new Map(walk(schemaOf(crd)));
    const container = '.spec.template.spec.containers[]';
    const quantity = nodes.get(`${container}.resources.requests{}`);
    expect(quantity).toMatchObject({ 'x-kubernetes-int-or-string': true });
    const pattern = new RegExp(String(quantity?.['pattern']));
    expect(['100m', '1.5', '64Mi', '1e3'].filter((q) => !pattern.test(q))).toEqual([]);
    expect(['lots', '1 GB', '64MB'].filter((q) => pattern.test(q))).toEqual([]);
    expect(nodes.get(`${container}.ports[].containerPort`)).toMatchObject({ type: 'integer', format: 'int32' });
    expect(nodes.get(`${container}.ports`)).toMatchObject({ 'x-kubernetes-list-map-keys': ['containerPort', 'protocol'] });
    expect(nodes.get(`${container}.ports[].protocol`)).toMatchObject({ default: 'TCP' });
    expect(nodes.get(`${container}.livenessProbe.httpGet.port`)).toMatchObject({ 'x-kubernetes-int-or-string': true });
    expect(nodes.get('.spec.template.spec.volumes[].persistentVolumeClaim.claimName')).toMatchObject({ type: 'string' });
    expect(nodes.get('.spec.template.spec.securityContext.runAsUser')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(nodes.get('.spec.volumeClaimTemplates[].spec.resources.requests{}')).toMatchObject({ 'x-kubernetes-int-or-string': true });
    expect(nodes.get('.spec.volumeClaimTemplates[].spec.volumeMode')).toMatchObject({ type: 'string' });
  });

  it("keeps ebb's own rules on the upstream schema", () => {
    const nodes = new Map(walk(schemaOf(crd)));
    expect(nodes.get('.spec.template')?.['required']).toEqual(['spec']);
    expect(nodes.get('.spec.template.spec')?.['required']).toEqual(['containers']);
    expect(nodes.get('.spec.template.spec')?.['x-kubernetes-validations']).toEqual([
      {
        rule: '!has(self.activeDeadlineSeconds)',
        message: 'activeDeadlineSeconds is not supported for App pods',
        fieldPath: '.activeDeadlineSeconds',
        reason: 'FieldValueForbidden',
      },
    ]);
    expect(nodes.get('.spec.template.spec.restartPolicy')).toMatchObject({ type: 'string', enum: ['Always'] });
    for (const list of ['containers', 'initContainers']) {
      const items = nodes.get(`.spec.template.spec.${list}[]`);
      expect(items?.['required'], list).toEqual(['name', 'image']);
      expect(nodes.get(`.spec.template.spec.${list}[].image`)?.['pattern'], list).toMatch(/^\^.*\$$/);
      expect(nodes.get(`.spec.template.spec.${list}[].name`), list).toMatchObject({ maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' });
      expect(nodes.get(`.spec.template.spec.${list}`), list).toMatchObject({ maxItems: 64 });
    }
    expect(nodes.get('.spec.template.metadata.labels')).toMatchObject({ maxProperties: 256 });
    expect(nodes.get('.spec.volumeClaimTemplates[].metadata')?.['required']).toEqual(['name']);
    expect(nodes.get('.spec.volumeClaimTemplates[].metadata.name')).toMatchObject({ maxLength: 63, minLength: 1 });
    expect(nodes.get('.spec.volumeClaimTemplates')).toMatchObject({ maxItems: 32 });
    expect(nodes.get('.spec.volumeClaimTemplates[].spec.accessModes')).toMatchObject({ maxItems: 8 });
  });

  it('accepts creationTimestamp in template and claim metadata, which exported manifests carry', () => {
    const nodes = new Map(walk(schemaOf(crd)));
    for (const path of ['.spec.template.metadata.creationTimestamp', '.spec.volumeClaimTemplates[].metadata.creationTimestamp']) {
      expect(nodes.get(path), path).toMatchObject({ type: 'string', format: 'date-time' });
    }
  });

  it('fits the 256 KiB annotation budget of client-side kubectl apply, with room to spare', () => {
    // kubectl apply stores the object as compact JSON in the last-applied-configuration annotation.
    expect(JSON.stringify(crd).length).toBeLessThan(CRD_APPLY_BUDGET_BYTES);
  });

  it('declares StatefulSet defaults in the schema', () => {
    const spec = schemaOf(crd)['properties'] as Record<string, JSONSchemaProps>;
    const props = spec['spec']!['properties'] as Record<string, JSONSchemaProps>;
    expect(props['replicas']!['default']).toBe(1);
    expect(props['revisionHistoryLimit']!['default']).toBe(10);
    expect(props['podManagementPolicy']).toMatchObject({ default: 'OrderedReady', enum: ['OrderedReady', 'Parallel'] });
    expect(schemaOf(crd)['required']).toEqual(['spec']);
    expect(spec['spec']!['required']).toEqual(['selector', 'template']);
  });

  it('makes containers a list-map keyed by name with at least one item', () => {
    const podSpec = [...walk(schemaOf(crd))].find(([p]) => p === '.spec.template.spec.containers')![1];
    expect(podSpec).toMatchObject({ minItems: 1, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });
  });
});

describe('ImageList CRD', () => {
  const crd = imageListCrd();

  it('is cluster-scoped with a status subresource and no scale', () => {
    expect(crd.metadata.name).toBe('imagelists.apps.ebb.dev');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.versions[0]!.subresources).toEqual({ status: {} });
  });

  it('keys spec and status images by image', () => {
    const nodes = new Map(walk(schemaOf(crd)));
    for (const path of ['.spec.images', '.status.images']) {
      expect(nodes.get(path), path).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['image'] });
    }
    expect(nodes.get('.spec.images[].image')).toMatchObject({ maxLength: 512 });
    expect(nodes.get('.spec.images[].image')?.['pattern']).toMatch(/^\^.*\$$/);
    expect(nodes.get('.spec.images[].repullIntervalSeconds')).toMatchObject({ default: 86400, minimum: 60 });
    expect(nodes.get('.status.images[].phase')).toMatchObject({ enum: ['Pending', 'Pulling', 'Pulled', 'Failed', 'Deferred'] });
  });
});

describe('ImagePullJob CRD', () => {
  const crd = imagePullJobCrd();
  const version = crd.spec.versions[0]!;

  it('is namespaced, short name ebpull, with a status subresource', () => {
    expect(crd.metadata.name).toBe('imagepulljobs.apps.ebb.dev');
    expect(crd.spec).toMatchObject({ scope: 'Namespaced', names: { kind: 'ImagePullJob', shortNames: ['ebpull'], categories: ['ebb'] } });
    expect(version.subresources).toEqual({ status: {} });
  });

  it('prints DESIRED, ACTIVE, SUCCEEDED, FAILED, COMPLETE, AGE', () => {
    expect(version.additionalPrinterColumns.filter((c) => c.priority === undefined).map((c) => c.name)).toEqual([
      'Desired',
      'Active',
      'Succeeded',
      'Failed',
      'Complete',
      'Age',
    ]);
  });

  it('validates images with the ImageList grammar, and keeps what and where immutable', () => {
    const nodes = new Map(walk(schemaOf(crd)));
    expect(nodes.get('.spec.images[]')?.['pattern']).toBe(new Map(walk(schemaOf(imageListCrd()))).get('.spec.images[].image')?.['pattern']);
    expect(nodes.get('.spec.images')).toMatchObject({ minItems: 1, 'x-kubernetes-list-type': 'set' });
    expect(nodes.get('.spec.completionPolicy')).toMatchObject({ enum: ['Always', 'Never'], default: 'Always' });
    const rules = (nodes.get('.spec')?.['x-kubernetes-validations'] as { message: string }[]).map((r) => r.message);
    expect(rules).toEqual(
      ['images', 'nodeSelector', 'tolerations', 'pullSecrets', 'completionPolicy'].map((f) => `${f} is immutable: create another ImagePullJob`),
    );
    expect(nodes.get('.spec.tolerations')).toMatchObject({ maxItems: 64 });
    expect(nodes.get('.spec.tolerations[].operator')).toMatchObject({ enum: ['Exists', 'Equal'] });
    expect(nodes.get('.spec.tolerations[].effect')).toMatchObject({ enum: ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'] });
  });
});

describe('toStructural', () => {
  it('rewrites literal unions, records and int-or-string into their structural forms', () => {
    const schema = Type.Object({ e: stringEnum(['A', 'B'], { default: 'A' }), m: stringMap(), n: intOrString() });
    expect(toStructural(schema)).toEqual({
      type: 'object',
      required: ['e', 'm', 'n'],
      properties: {
        e: { type: 'string', enum: ['A', 'B'], default: 'A' },
        m: { type: 'object', additionalProperties: { type: 'string' } },
        n: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
    });
  });

  it('drops TypeBox-only keys', () => {
    const out = toStructural(Type.Object({ a: Type.String() }, { $id: 'X', title: 'T' }));
    expect(out).toEqual({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } });
    expect(Object.getOwnPropertySymbols(out)).toEqual([]);
  });

  it.each([
    ['a union of objects', Type.Object({ u: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]) }), '.u: anyOf is only allowed'],
    ['a node without type', Type.Object({ x: Type.Unknown() }), '.x: every node needs a type'],
    ['a record keyed by a pattern', Type.Object({ r: Type.Record(Type.String({ pattern: '^a' }), Type.String()) }), '.r: patternProperties'],
    ['a list-map whose key is optional', Type.Object({ l: listMap(Type.Object({ k: Type.Optional(Type.String()) }), ['k']) }), 'must be required or defaulted'],
    ['an intersection', Type.Object({ i: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]) }), '"allOf" is not allowed'],
  ])('refuses %s, naming the path', (_what, schema, message) => {
    expect(() => toStructural(schema)).toThrow(StructuralSchemaError);
    expect(() => toStructural(schema)).toThrow(message);
  });

  it('accepts an untyped node when it preserves unknown fields', () => {
    expect(toStructural(Type.Object({ x: Type.Unsafe({ 'x-kubernetes-preserve-unknown-fields': true }) }))).toMatchObject({
      properties: { x: { 'x-kubernetes-preserve-unknown-fields': true } },
    });
    expect(toStructural(openObject({ a: Type.String() }))).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });
});
