import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderSettingsReference } from '../common/settings-docs.ts';
import { table } from '../common/settings.ts';
import { CONFIG_BEGIN, CONFIG_END, PROCESS_SETTINGS, withConfigReference } from './config-reference.ts';

const PAGE = new URL('../../docs/configuration.md', import.meta.url);
const IN_POD = ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'];

describe('configuration reference', () => {
  it('docs/configuration.md holds the reference generated from the settings tables', () => {
    const page = readFileSync(PAGE, 'utf8');
    expect(page, 'docs/configuration.md lacks the configuration markers').toContain(CONFIG_BEGIN);
    const fresh = withConfigReference(page) === page;
    expect(fresh, 'the configuration reference is out of date: run `make config-docs` (npm run gen:config-docs) and commit docs/configuration.md').toBe(true);
  });

  it('keeps the text around the markers', () => {
    const doc = `intro\n${CONFIG_BEGIN}\nSTALE-REFERENCE-TEXT\n${CONFIG_END}\noutro\n`;
    const out = withConfigReference(doc);
    expect(out.startsWith(`intro\n${CONFIG_BEGIN}\n`)).toBe(true);
    expect(out.endsWith(`${CONFIG_END}\noutro\n`)).toBe(true);
    expect(out).not.toContain('STALE-REFERENCE-TEXT');
    expect(() => withConfigReference('no markers')).toThrow(CONFIG_BEGIN);
  });

  it('every variable is EBB_-prefixed, except the ones Kubernetes and kubectl define', () => {
    const names = PROCESS_SETTINGS.flatMap((p) => Object.values(p.entries).map((s) => s.name));
    expect(names.filter((n) => !n.startsWith('EBB_') && !IN_POD.includes(n))).toEqual([]);
  });

  it('no table declares a variable twice', () => {
    for (const { process, entries } of PROCESS_SETTINGS) {
      const names = Object.values(entries).map((s) => s.name);
      expect(names, process).toEqual([...new Set(names)]);
    }
  });

  it('refuses two different declarations of one variable', () => {
    const a = table({ x: { name: 'X', type: 'int', default: 1, min: 0, max: 9, doc: 'x' } });
    const b = table({ x: { name: 'X', type: 'int', default: 2, min: 0, max: 9, doc: 'x' } });
    expect(() =>
      renderSettingsReference([
        { process: 'a', entries: a.entries },
        { process: 'b', entries: b.entries },
      ]),
    ).toThrow('X is declared differently');
  });

  it('renders one row per variable naming its readers, escaping pipes', () => {
    const shared = { name: 'S', type: 'switch', default: true, doc: 'on | off' } as const;
    const out = renderSettingsReference([
      { process: 'a', entries: table({ s: shared, n: { name: 'N', type: 'string', required: true, doc: 'n' } }).entries },
      { process: 'b', entries: table({ s: shared, p: { name: 'P', type: 'string', secret: true, doc: 'p' } }).entries },
      { process: 'c', entries: table({ s: shared }).entries },
    ]);
    expect(out.split('\n')).toEqual([
      '| variable | default | read by | meaning |',
      '|---|---|---|---|',
      '| `S` | `true` | all | on \\| off; `true` or `false` |',
      '| `N` | required | a | n |',
      '| `P` | unset | b | p; never shown |',
      '',
    ]);
  });
});
