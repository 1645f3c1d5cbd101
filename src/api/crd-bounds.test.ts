/**
 * What a tenant can write into ebb's own fields is bounded by the schema: every string of a spec has a length
 * limit (or is an enum), every list a count limit, every map a key limit, so an object's size is set by the
 * upstream parts (the pod template and the claim templates, which mirror upstream and, like a StatefulSet's,
 * carry no such bounds) and not by ebb's. revisionHistoryLimit is capped: each kept revision is a whole template.
 */
import { describe, expect, it } from 'vitest';
import { MAX_REVISION_HISTORY_LIMIT } from './app-spec.ts';
import { appCrd, imageListCrd, imagePullJobCrd, type CustomResourceDefinition } from './crds.ts';
import type { JSONSchemaProps } from './structural.ts';

/** Paths under `.spec` that mirror upstream schemas (their list's own count is still bounded). */
const UPSTREAM = ['.spec.template.', '.spec.volumeClaimTemplates[].'];

function* walk(node: JSONSchemaProps, path: string): Generator<[string, JSONSchemaProps]> {
  yield [path, node];
  for (const [name, child] of Object.entries((node['properties'] as Record<string, JSONSchemaProps> | undefined) ?? {})) yield* walk(child, `${path}.${name}`);
  if (node['items']) yield* walk(node['items'] as JSONSchemaProps, `${path}[]`);
  if (typeof node['additionalProperties'] === 'object') yield* walk(node['additionalProperties'] as JSONSchemaProps, `${path}{}`);
}

/** The spec nodes of `crd` that ebb defines and that hold a string, a list or a map without a bound. */
function unbounded(crd: CustomResourceDefinition): string[] {
  const spec = (crd.spec.versions[0]?.schema.openAPIV3Schema['properties'] as Record<string, JSONSchemaProps>)['spec'];
  if (!spec) throw new Error(`${crd.metadata.name} has no spec`);
  return [...walk(spec, '.spec')]
    .filter(([path]) => !UPSTREAM.some((prefix) => path.startsWith(prefix)))
    .filter(([, n]) => {
      const stringy = n['type'] === 'string' || n['x-kubernetes-int-or-string'] === true;
      if (stringy) return n['maxLength'] === undefined && n['enum'] === undefined;
      if (n['type'] === 'array') return n['maxItems'] === undefined;
      if (n['type'] === 'object' && n['additionalProperties'] !== undefined) return n['maxProperties'] === undefined;
      return false;
    })
    .map(([path]) => path);
}

describe("ebb's own fields are bounded", () => {
  it.each([
    ['App', appCrd()],
    ['ImageList', imageListCrd()],
    ['ImagePullJob', imagePullJobCrd()],
  ])('%s: every string, list and map of the spec has a limit', (_kind, crd) => {
    expect(unbounded(crd)).toEqual([]);
  });

  it('caps revisionHistoryLimit', () => {
    const spec = (appCrd().spec.versions[0]?.schema.openAPIV3Schema['properties'] as Record<string, JSONSchemaProps>)['spec'];
    const limit = (spec?.['properties'] as Record<string, JSONSchemaProps>)['revisionHistoryLimit'];
    expect(limit).toMatchObject({ minimum: 0, maximum: MAX_REVISION_HISTORY_LIMIT });
    expect(MAX_REVISION_HISTORY_LIMIT).toBe(100);
  });
});
