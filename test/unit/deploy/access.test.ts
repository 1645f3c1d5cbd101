import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ACCESS, ACCESS_BEGIN, ACCESS_END, renderAccessTable, withAccessTable } from './access.ts';

const PAGE = new URL('../../../docs/install.md', import.meta.url);

describe('the access table', () => {
  it('docs/install.md holds the table the integration test checks', () => {
    const page = readFileSync(PAGE, 'utf8');
    expect(page, 'docs/install.md lacks the access markers').toContain(ACCESS_BEGIN);
    const fresh = withAccessTable(page) === page;
    expect(fresh, 'the access table is out of date: run `make access-docs` (npm run gen:access-docs) and commit docs/install.md').toBe(true);
  });

  it('keeps the text around the markers and renders one row per entry', () => {
    const out = withAccessTable(`intro\n${ACCESS_BEGIN}\nold\n${ACCESS_END}\noutro\n`);
    expect(out.startsWith(`intro\n${ACCESS_BEGIN}\n`)).toBe(true);
    expect(out.endsWith(`${ACCESS_END}\noutro\n`)).toBe(true);
    expect(out).not.toContain('old');
    expect(
      renderAccessTable()
        .split('\n')
        .filter((l) => l.startsWith('| ') && !l.startsWith('| component')),
    ).toHaveLength(ACCESS.length);
    expect(() => withAccessTable('no markers')).toThrow(ACCESS_BEGIN);
  });

  it('has allowed and denied rows for every component, and no row twice', () => {
    for (const component of ['watcher', 'worker', 'daemon'] as const) {
      const rows = ACCESS.filter((r) => r.component === component);
      expect(
        rows.some((r) => r.allowed),
        component,
      ).toBe(true);
      expect(
        rows.some((r) => !r.allowed),
        component,
      ).toBe(true);
    }
    const keys = ACCESS.flatMap((r) =>
      r.verbs.map((v) => `${r.component} ${v} ${r.on.group}/${r.on.resource}/${r.on.subresource ?? ''} ${r.by} ${r.object ?? ''}`),
    );
    expect(keys).toEqual([...new Set(keys)]);
  });
});

/** `group/resource[/subresource] verb` for every grant of a ClusterRole's rules. */
function grants(rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${g}/${res} ${v}`);
  return out;
}

/** Grants beyond the table that a component needs and no access review can ask about usefully. */
// `/secrets get` is limited to the name ebb-notify (resourceNames), which the table's rows, asked without a name, do not express.
const EXTRA_GRANTS: Record<string, string[]> = { worker: ['apps.ebb.dev/apps/finalizers update', '/pods/finalizers update', '/secrets get'] };

describe('the ClusterRoles', () => {
  it.each(['watcher', 'worker', 'daemon'] as const)('of the %s grant exactly the allowed rows of the table', (component) => {
    const docs = parseAllDocuments(readFileSync(new URL(`../../../deploy/rbac/${component}.yaml`, import.meta.url), 'utf8')).map((d) => d.toJS() as unknown);
    const role = docs.find(
      (d): d is { kind: string; rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] } =>
        typeof d === 'object' && d !== null && (d as { kind?: string }).kind === 'ClusterRole',
    );
    expect(role, `deploy/rbac/${component}.yaml has a ClusterRole`).toBeDefined();
    const allowed = new Set<string>(EXTRA_GRANTS[component] ?? []);
    for (const row of ACCESS.filter((r) => r.component === component && r.allowed && r.by === 'rbac')) {
      const res = `${row.on.group}/${row.on.resource}${row.on.subresource ? `/${row.on.subresource}` : ''}`;
      for (const verb of row.verbs) allowed.add(`${res} ${verb}`);
    }
    expect([...grants(role?.rules ?? [])].sort()).toEqual([...allowed].sort());
  });
});
