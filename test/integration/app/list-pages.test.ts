/** The worker's reads come in pages from the real apiserver: every object, once, whatever the page size. */
import { beforeAll, describe, expect, it } from 'vitest';
import { core } from '../../../src/kube/paths.ts';
import { listAll } from '../../../src/kube/reads.ts';
import { freshNamespace, sandbox } from '../support.ts';

let ns = '';

beforeAll(async () => {
  ns = await freshNamespace('app-pages');
  for (let i = 0; i < 7; i++) {
    await sandbox().rest.create(core('configmaps', ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, labels: { pick: i % 2 === 0 ? 'even' : 'odd' } },
    });
  }
});

describe('listAll', () => {
  it('reads every selected object across pages', async () => {
    const names = async (selector: string | undefined, pageSize: number): Promise<string[]> =>
      (await listAll<{ metadata: { name: string } }>(sandbox().rest, core('configmaps', ns), selector, AbortSignal.timeout(10_000), { pageSize }))
        .map((c) => c.metadata.name)
        .sort();
    expect(await names('pick=even', 2)).toEqual(['cm-0', 'cm-2', 'cm-4', 'cm-6']);
    expect(await names('pick', 3)).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6']);
    expect(await names('pick=odd', 500)).toEqual(['cm-1', 'cm-3', 'cm-5']);
  });
});
