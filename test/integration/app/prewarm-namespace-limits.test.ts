/**
 * Per-namespace pre-warm limits on the sandbox, with the real watcher and worker: tenant A's warm pool wants more
 * ImageList entries (images × nodes) than EBB_PREWARM_NAMESPACE_ENTRIES allows its namespace; only what fits is
 * written and its condition ImagesPrewarmed says why the other nodes wait. Tenant B's warm pool, in another
 * namespace, gets its entries on every node all the same. The pool is every sandbox node, through a label
 * unique to this file.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConditionType } from '../../../src/api/keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { startWatcher, type RunningWatcher } from '../../../src/watcher/watcher.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { reconcilers } from '../../../src/workers/reconcilers.ts';
import { startWorker, type RunningWorker } from '../../../src/workers/worker.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { prewarmHeldBy } from './prewarm-support.ts';
import { controllerEnv, createApp, getApp, image, uniqueName } from './harness.ts';

const POOL_KEY = 'sandbox.ebb.dev/ns-limits';
const POOL = `nl-${randomBytes(3).toString('hex')}`;
const TIMEOUT = 60_000;

let nsA = '';
let nsB = '';
let cap = 0;
let watcher: RunningWatcher | undefined;
let worker: RunningWorker | undefined;

const labelNodes = async (value: string | null): Promise<void> => {
  for (const node of sandbox().nodeNames)
    await sandbox().rest.patch(core('nodes', undefined, node), { metadata: { labels: { [POOL_KEY]: value } } }, PatchType.merge);
};

beforeAll(async () => {
  nsA = await freshNamespace('nl-a');
  nsB = await freshNamespace('nl-b');
  // Room for one image on every node: B's pool of one image fits, A's of two does not.
  cap = sandbox().nodeNames.length;
  const env = controllerEnv(`${nsA},${nsB}`, { EBB_PREWARM_NAMESPACE_ENTRIES: String(cap) });
  await labelNodes(POOL);
  const log = createLogger('it-prewarm-ns-limits', 'warn');
  watcher = await startWatcher(parseWatcherConfig(env), log);
  worker = await startWorker(parseWorkerConfig(env), log, reconcilers());
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await watcher?.stop();
  await labelNodes(null);
});

const pool = (name: string, images: string[]) => ({
  replicas: 1,
  selector: { matchLabels: { app: name } },
  template: {
    metadata: { labels: { app: name } },
    spec: {
      initContainers: images.slice(1).map((img, i) => ({ name: `init-${i}`, image: img })),
      containers: [{ name: 'main', image: images[0] ?? image('x') }],
      terminationGracePeriodSeconds: 1,
    },
  },
  imagePrewarm: { enabled: true, nodeSelector: { [POOL_KEY]: POOL } },
});

/** Entries of `mine` in the ImageLists (a node's list also holds other Apps' entries). */
const entries = (held: Record<string, string[]>, mine: readonly string[]): number =>
  Object.values(held).reduce((n, images) => n + images.filter((i) => mine.includes(i)).length, 0);
const IMAGES_A = [image('a1'), image('a2')];

describe("one namespace's warm pools past its ImageList entries", () => {
  it("write only what fits, say so, and leave another namespace's pool whole", async () => {
    const a = uniqueName('greedy');
    const b = uniqueName('modest');
    await createApp(nsA, a, pool(a, IMAGES_A));
    const condition = await waitFor(
      async () => {
        const c = (await getApp(nsA, a)).status?.conditions?.find((x) => x.type === ConditionType.imagesPrewarmed);
        return c?.message.includes('EBB_PREWARM_NAMESPACE_ENTRIES') ? c : undefined;
      },
      { timeoutMs: TIMEOUT, intervalMs: 250, what: "A's condition naming the namespace's entries" },
    );
    expect(condition.status).toBe('False');
    const heldA = await prewarmHeldBy(nsA, a);
    expect(entries(heldA, IMAGES_A), `A holds at most ${cap} entries`).toBeLessThanOrEqual(cap);
    expect(Object.keys(heldA).length).toBe(Math.floor(cap / 2));

    await createApp(nsB, b, pool(b, [image('b1')]));
    const heldB = await waitFor(
      async () => {
        const held = await prewarmHeldBy(nsB, b);
        return Object.keys(held).length === cap ? held : undefined;
      },
      { timeoutMs: TIMEOUT, intervalMs: 250, what: "B's entries on every node" },
    );
    expect(Object.keys(heldB).sort()).toEqual([...sandbox().nodeNames].sort());
    expect(Object.values(heldB).every((images) => images.includes(image('b1')))).toBe(true);
    // A did not grow meanwhile.
    expect(entries(await prewarmHeldBy(nsA, a), IMAGES_A)).toBeLessThanOrEqual(cap);
  });
});
