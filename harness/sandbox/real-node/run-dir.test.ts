import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realHostOps } from './host-ops.ts';
import { removeRunDir } from './run-dir.ts';

describe('removeRunDir', () => {
  let root = '';
  let dir = '';
  let ledgerPath = '';
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ebb-run-dir-'));
    dir = join(root, 'ebb-rn-run');
    ledgerPath = join(root, 'run', 'ledger.json');
    await mkdir(join(dir, 'real-node-0', 'logs'), { recursive: true });
    await writeFile(join(dir, 'real-node-0', 'logs', 'kubelet.log'), 'log\n');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const exists = (path: string): Promise<boolean> => realHostOps.exists(path);

  it('removes the directory of a run that stopped cleanly', async () => {
    expect(await removeRunDir(dir, { ops: realHostOps, failed: false, ledgerPath })).toBeUndefined();
    expect(await exists(dir)).toBe(false);
  });

  it('keeps it when a test failed, for its logs', async () => {
    expect(await removeRunDir(dir, { ops: realHostOps, failed: true, ledgerPath })).toMatch(/a test failed/);
    expect(await exists(join(dir, 'real-node-0', 'logs', 'kubelet.log'))).toBe(true);
  });

  it('keeps it while the ledger still names it, and removes it when the ledger is another run’s', async () => {
    await mkdir(join(root, 'run'));
    await writeFile(ledgerPath, JSON.stringify({ owner: 1, dir, changes: [{ kind: 'bridge', name: 'ebbrn0' }] }));
    expect(await removeRunDir(dir, { ops: realHostOps, failed: false, ledgerPath })).toMatch(/still names it/);
    expect(await exists(dir)).toBe(true);
    await writeFile(ledgerPath, JSON.stringify({ owner: 1, dir: join(root, 'ebb-rn-other'), changes: [] }));
    expect(await removeRunDir(dir, { ops: realHostOps, failed: false, ledgerPath })).toBeUndefined();
    expect(await exists(dir)).toBe(false);
  });
});
