/** Identifies a REST collection or object: `/api/v1/...` for the core group, `/apis/<group>/<version>/...` otherwise. */
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: string | undefined;
}

export function resourcePath(ref: ResourceRef): string {
  const base = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  const name = ref.name ? `/${encodeURIComponent(ref.name)}` : '';
  const sub = ref.subresource && ref.name ? `/${ref.subresource}` : '';
  return `${base}${ns}/${ref.resource}${name}${sub}`;
}

export const core = (resource: string, namespace?: string, name?: string, subresource?: string): ResourceRef => ({
  group: '',
  version: 'v1',
  resource,
  namespace,
  name,
  subresource,
});
