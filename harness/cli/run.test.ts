import { describe, expect, it } from 'vitest';
import { parseWatcherConfig } from '../../src/watcher/config.ts';
import { sampleForRealNode, sandboxBoardLogin } from './run.ts';

describe('sandboxBoardLogin', () => {
  it('makes up credentials the watcher then requires, and prints them', () => {
    const env: Record<string, string | undefined> = { EBB_HTTP_ADDRESS: '127.0.0.1' };
    const [note] = sandboxBoardLogin(env);
    const password = env['EBB_BOARD_PASSWORD'] ?? '';
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(note).toContain(`ebb / ${password}`);
    expect(parseWatcherConfig(env).board?.auth).toEqual({ kind: 'basic', user: 'ebb', password });
  });

  it('keeps credentials the environment names, and a board switched off', () => {
    for (const given of [{ EBB_BOARD_TOKEN: 't' }, { EBB_BOARD_USER: 'u', EBB_BOARD_PASSWORD: 'p' }, { EBB_BOARD: 'false' }]) {
      const env: Record<string, string | undefined> = { ...given };
      expect(sandboxBoardLogin(env)).toEqual([]);
      expect(env).toEqual(given);
    }
  });
});

describe('sampleForRealNode', () => {
  it('pins the sample to the real nodes, one pod each, and runs the sandbox registry image, leaving the rest', async () => {
    const { readFile } = await import('node:fs/promises');
    const { parse } = await import('yaml');
    const doc = parse(await readFile(new URL('../../deploy/samples/app.yaml', import.meta.url), 'utf8')) as Parameters<typeof sampleForRealNode>[0];
    const app = sampleForRealNode(doc, '127.0.0.1:5000', 3);
    expect(app.spec.template.spec.nodeSelector).toEqual({ 'sandbox.ebb.dev/node': 'real' });
    expect(app.spec.replicas).toBe(3);
    expect(app.spec.template.spec).toMatchObject({
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } },
      ],
    });
    expect(app.spec.template.spec.containers.map((c) => c.image)).toEqual(['127.0.0.1:5000/ebb/app:v1']);
    expect(app.metadata).toEqual(doc.metadata);
    expect(doc.spec.template.spec.nodeSelector).toBeUndefined();
  });
});
