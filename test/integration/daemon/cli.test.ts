/**
 * `ebb daemon` as its own process, configured from the environment like the DaemonSet configures it: it
 * serves its node, answers /readyz, and on SIGTERM writes its final status and exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { sandbox } from '../support.ts';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const WAIT = { timeoutMs: 30_000, intervalMs: 100 };
type LogLine = Record<string, unknown> & { msg?: string };

describe('ebb daemon (process)', () => {
  const { rest, dir, nodeNames, kubeconfig } = sandbox();
  const node = nodeNames[1]!;
  const tag = randomBytes(3).toString('hex');
  const lines: LogLine[] = [];
  let child: ChildProcess | undefined;

  const list = (): Promise<ImageList | undefined> =>
    rest.get<ImageList>(imageListRef(node)).catch((err: unknown) => {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    });
  const logged = (msg: string, match: (l: LogLine) => boolean = () => true): Promise<LogLine> =>
    waitFor(() => lines.find((l) => l.msg === msg && match(l)), { ...WAIT, what: `log "${msg}"` });

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await rest.delete(imageListRef(node)).catch(() => undefined);
  });

  it('serves its node, then on SIGTERM writes the final status and exits 0', async () => {
    child = spawn(process.execPath, [MAIN, 'daemon'], {
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        EBB_NODE_NAME: node,
        EBB_CRI_ENDPOINT: `unix://${join(dir, 'nodes', node, 'cri.sock')}`,
        EBB_HTTP_ADDRESS: '127.0.0.1',
        EBB_HTTP_PORT: '0',
        EBB_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ msg: line });
      }
    });

    const started = await logged('daemon started');
    const port = started['port'] as number;
    await waitFor(async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined), { ...WAIT, what: '/readyz 200' });

    const first = `registry.example.com/daemon-cli/first:${tag}`;
    await rest.create(imageListRef(), { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: node }, spec: { images: [{ image: first }] } });
    await waitFor(async () => ((await list())?.status?.images?.[0]?.phase === 'Pulled' ? true : undefined), { ...WAIT, what: 'first image Pulled' });

    // A change the periodic flush (2 s) has not written yet when the signal comes: the final write carries it.
    const second = `registry.example.com/daemon-cli/second:${tag}`;
    await rest.patch(imageListRef(node), { spec: { images: [{ image: first }, { image: second }] } }, PatchType.merge);
    await logged('image pulled', (l) => l['image'] === second);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await logged('daemon stopped');
    const status = (await list())?.status;
    expect(status?.images?.map((s) => [s.image, s.phase])).toEqual([
      [first, 'Pulled'],
      [second, 'Pulled'],
    ]);
    expect(status?.observedGeneration).toBe(2);
  });
});
