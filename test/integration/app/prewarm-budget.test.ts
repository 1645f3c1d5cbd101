/**
 * The cluster's pre-warm pull budget through the real apiserver, watcher, worker and Redis: two Apps with the
 * defaults (`imagePrewarm: {enabled: true}`) and a budget of 2. There is no node daemon in the sandbox: the
 * test plays it, so a requested node stays in progress until the test reports its image Pulled.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import type { App } from '../../../src/api/app.ts';
import { API_VERSION, appRef, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { prewarmLabelKey } from '../../../src/api/prewarm-keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { sandbox } from '../support.ts';
import { spreadTemplate } from './prewarm-support.ts';
import { createApp, image, patchApp, settled, uniqueName, useController } from './harness.ts';

const BUDGET = 2;
const ctl = useController('app-pwb', { env: { EBB_PREWARM_PULL_BUDGET: String(BUDGET) } });
const rest = () => sandbox().rest;

/** Pods on distinct nodes (3 pods, 3 nodes), updated in place, the rollout paused: every node is a target. */
function spec(name: string, tag: string): Partial<AppSpec> {
  return {
    replicas: 3,
    podManagementPolicy: 'Parallel',
    imagePrewarm: { enabled: true },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', paused: true } },
    template: spreadTemplate(name, tag),
  };
}

interface Pulls {
  /** (App, node) pairs requested so far. */
  requested: number;
  /** Of those, the ones whose image is not reported Pulled. */
  inProgress: string[];
}

/** What the ImageLists say of Apps `names` (each App's image `image(<tag>)`). */
async function pulls(apps: readonly { name: string; tag: string }[]): Promise<Pulls> {
  const out: Pulls = { requested: 0, inProgress: [] };
  for (const { name, tag } of apps) {
    const lists = (await rest().list<ImageList>(imageListRef(), { labelSelector: prewarmLabelKey(ctl.ns, name) })).items;
    for (const l of lists) {
      out.requested++;
      const pulled = l.status?.images?.some((s) => s.image === image(tag) && s.phase === 'Pulled') === true;
      if (!pulled) out.inProgress.push(`${l.metadata.name ?? ''} ${image(tag)}`);
    }
  }
  return out;
}

/** Plays the node daemon: `image` Pulled on `node`. */
async function reportPulled(node: string, img: string): Promise<void> {
  const body = {
    apiVersion: API_VERSION,
    kind: IMAGE_LIST_KIND,
    metadata: { name: node },
    status: { images: [{ image: img, phase: 'Pulled', lastPullDurationMillis: 3_000 }] },
  };
  await rest().patch(imageListRef(node, 'status'), body, 'application/apply-patch+yaml', { fieldManager: `it-daemon-${img.split(':')[1] ?? ''}` });
}

afterAll(async () => {
  // ImageLists the test's daemon reports left without entries are deleted, as found.
  for (const node of sandbox().nodeNames) {
    const l = await rest()
      .get<ImageList>(imageListRef(node))
      .catch(() => undefined);
    if (!l || (l.spec?.images ?? []).length > 0) continue;
    try {
      await rest().delete(imageListRef(node), { uid: l.metadata.uid });
    } catch (err) {
      if (!isKubeError(err, 'NotFound')) throw err;
    }
  }
});

describe('pre-warm pull budget', () => {
  it('two Apps wanting six pulls between them never have more than the budget in progress; the rest follow as pulls end', async () => {
    const apps = [
      { name: uniqueName('pwba'), tag: 'a1' },
      { name: uniqueName('pwbb'), tag: 'b1' },
    ];
    for (const a of apps) await createApp(ctl.ns, a.name, spec(a.name, a.tag));
    await Promise.all(apps.map((a) => settled(ctl.ns, a.name)));
    const next = apps.map((a) => ({ name: a.name, tag: a.tag.replace('1', '2') }));
    await Promise.all(next.map((a) => patchApp(ctl.ns, a.name, { template: spec(a.name, a.tag).template })));
    let peak = 0;
    const watch = async (want: (p: Pulls) => boolean): Promise<Pulls> =>
      waitFor(
        async () => {
          const p = await pulls(next);
          peak = Math.max(peak, p.inProgress.length);
          return want(p) ? p : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200, what: 'pre-warm pulls' },
      );
    const first = await watch((p) => p.inProgress.length === BUDGET);
    // An App whose nodes wait says so.
    const waiting = await waitFor(
      async () => {
        const conds = await Promise.all(next.map(async (a) => (await rest().get<App>(appRef(ctl.ns, a.name))).status?.conditions ?? []));
        return conds.flat().find((c) => c.type === 'ImagesPrewarmed' && c.message?.includes('pre-warm pull budget')) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'a condition naming the budget' },
    );
    expect(waiting).toBe(true);
    // Pulls end one by one; the waiting nodes are requested, never more than the budget at once.
    let current = first;
    while (current.requested < 6) {
      const [node, img] = current.inProgress[0]?.split(' ') ?? [];
      if (!node || !img) throw new Error('nothing in progress while nodes are left to request');
      await reportPulled(node, img);
      const before = current.requested;
      current = await watch((p) => p.requested > before && !p.inProgress.includes(`${node} ${img}`));
    }
    await watch((p) => p.requested === 6);
    expect(peak).toBe(BUDGET);
    // Resumed, both rollouts finish and their entries go.
    await Promise.all(next.map((a) => patchApp(ctl.ns, a.name, { updateStrategy: { rollingUpdate: { paused: false } } })));
    await watch((p) => p.requested === 0);
  });
});
