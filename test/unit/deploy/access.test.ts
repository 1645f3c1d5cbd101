import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACCESS, ACCESS_BEGIN, ACCESS_END, renderAccessTable, withAccessTable } from './access.ts';

const README = new URL('../../../README.md', import.meta.url);

describe('the access table', () => {
  it("README.md's install section holds the table the integration test checks", () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme, 'README.md lacks the access markers').toContain(ACCESS_BEGIN);
    const install = readme.slice(readme.indexOf('## Install on a cluster'));
    expect(install.indexOf(ACCESS_BEGIN), 'the access table belongs to the install section').toBeLessThan(install.indexOf('\n## ', 1));
    const fresh = withAccessTable(readme) === readme;
    expect(fresh, "README.md's access table is out of date: run `make access-docs` (npm run gen:access-docs) and commit README.md").toBe(true);
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
