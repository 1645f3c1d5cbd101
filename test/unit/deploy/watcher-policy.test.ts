/**
 * The watcher's App policy (ValidatingAdmissionPolicy ebb-watcher-app-actions, deploy/rbac/watcher.yaml) names
 * the fields it keeps unchanged one by one, as CEL cannot compare an object "except one field": every field of
 * the App's spec and of `rollingUpdate` in the CRD's schema must be named, or a field added to the API would be
 * open to the watcher. A `rollingUpdate` field with a schema default is compared by its value in force (the
 * apiserver fills in the defaults of a rollingUpdate that pausing creates). The policy's behaviour is tested on a
 * real apiserver (test/integration/deploy/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './kustomize.ts';

interface Schema {
  properties?: Record<string, Schema>;
  default?: unknown;
}

const crd = parseAllDocuments(readFileSync(join(ROOT, 'deploy/crds/apps.apps.ebb.dev.yaml'), 'utf8'))[0]?.toJS() as {
  spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
};
const policy = parseAllDocuments(readFileSync(join(ROOT, 'deploy/rbac/watcher.yaml'), 'utf8'))
  .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: unknown })
  .find((d) => d.kind === 'ValidatingAdmissionPolicy' && d.metadata.name === 'ebb-watcher-app-actions');
const text = JSON.stringify(policy?.spec ?? {});

const props = (s: Schema | undefined): string[] => Object.keys(s?.properties ?? {});

describe("the watcher's App policy", () => {
  it('exists in deploy/', () => {
    expect(policy).toBeDefined();
  });

  for (const version of crd.spec.versions) {
    const spec = version.schema.openAPIV3Schema.properties?.['spec'];
    const rolling = spec?.properties?.['updateStrategy']?.properties?.['rollingUpdate'];

    it(`keeps every spec field of ${version.name} but the template and the update strategy unchanged`, () => {
      const fields = props(spec).filter((f) => f !== 'template' && f !== 'updateStrategy');
      expect(fields.length).toBeGreaterThan(10);
      expect(fields.filter((f) => !text.includes(`object.spec.${f} == oldObject.spec.${f}`))).toEqual([]);
    });

    it(`keeps every rollingUpdate field of ${version.name} but paused unchanged, a defaulted one by its value in force`, () => {
      const fields = props(rolling).filter((f) => f !== 'paused');
      expect(fields.length).toBeGreaterThan(5);
      const named = (f: string): boolean => {
        const fallback = rolling?.properties?.[f]?.default;
        if (fallback === undefined) return text.includes(`variables.newRolling.${f} == variables.oldRolling.${f}`);
        const literal = typeof fallback === 'string' ? `'${fallback}'` : JSON.stringify(fallback);
        const inForce = (side: string): string => `(has(variables.${side}Rolling.${f}) ? variables.${side}Rolling.${f} : ${literal})`;
        return text.includes(`${inForce('new')} == ${inForce('old')}`);
      };
      expect(fields.filter((f) => !named(f))).toEqual([]);
      expect(text).not.toContain('variables.newRolling.paused');
    });

    it(`keeps the update strategy's other fields of ${version.name} unchanged`, () => {
      const fields = props(spec?.properties?.['updateStrategy']).filter((f) => f !== 'rollingUpdate');
      expect(fields.filter((f) => !text.includes(`variables.newStrategy.${f} == variables.oldStrategy.${f}`))).toEqual([]);
    });
  }
});
