/**
 * Image pre-warming on the sandbox with the real watcher and worker: ImageLists are written by server-side
 * apply with one field manager per App. There is no node daemon in the sandbox: nobody reports pulls unless a
 * test plays the daemon with a status apply, and the rollouts go on regardless.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { API_VERSION, IMAGE_LIST_KIND, imageListRef } from '../../../src/api/group.ts';
import type { ImageList } from '../../../src/api/image-list.ts';
import { PREWARM_LABEL_PREFIX, prewarmFieldManager, prewarmLabelKey } from '../../../src/api/prewarm-keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { sandbox } from '../support.ts';
import { prewarmHeldBy, spreadTemplate } from './prewarm-support.ts';
import { createApp, image, patchApp, settled, uniqueName, until, useController, type Snapshot } from './harness.ts';

const ctl = useController('app-pw');
const rest = () => sandbox().rest;
const PERSON = 'it-person';
const INIT_B = 'registry.example.com/team/init:b2';
const TOOL = 'registry.example.com/person/tool:1';

function spec(name: string, prewarm: { parallelism?: number }, rollingUpdate: Record<string, unknown> = {}): Partial<AppSpec> {
  return {
    replicas: 3,
    podManagementPolicy: 'Parallel',
    template: spreadTemplate(name, 'v1'),
    imagePrewarm: { enabled: true, ...prewarm },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', ...rollingUpdate } },
  };
}

async function imageLists(labelSelector?: string): Promise<ImageList[]> {
  return (await rest().list<ImageList>(imageListRef(), labelSelector ? { labelSelector } : {})).items;
}

/** Node → images of every ImageList of the sandbox nodes. */
async function allImages(): Promise<Record<string, string[]>> {
  const nodes = new Set(sandbox().nodeNames);
  const lists = (await imageLists()).filter((l) => nodes.has(l.metadata.name ?? ''));
  return Object.fromEntries(lists.map((l) => [l.metadata.name ?? '', (l.spec?.images ?? []).map((e) => e.image).sort()]));
}

/** The keys of the pre-warm request times `l` carries (annotations under an App's label key, RFC 3339 values). */
const requestTimes = (l: ImageList): string[] =>
  Object.entries(l.metadata.annotations ?? {})
    .filter(([k, v]) => k.startsWith(PREWARM_LABEL_PREFIX) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(v))
    .map(([k]) => k)
    .sort();
const managersOf = (l: ImageList): string[] => ((l.metadata as { managedFields?: { manager: string }[] }).managedFields ?? []).map((m) => m.manager);
const nodeOf = (p: Snapshot['pods'][number]): string => (typeof p.spec?.['nodeName'] === 'string' ? p.spec['nodeName'] : '');
const nodesOf = (s: Snapshot): string[] => s.pods.map(nodeOf).sort();
const sorted = (o: Record<string, string[]>): string[] => Object.keys(o).sort();

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  return waitFor(fn, { timeoutMs, intervalMs: 200, what });
}

/** Plays the node daemon: reports `image` in phase `phase` in the status of ImageList `node`. */
async function report(node: string, image: string, phase: 'Pulled' | 'Failed'): Promise<void> {
  const body = {
    apiVersion: API_VERSION,
    kind: IMAGE_LIST_KIND,
    metadata: { name: node },
    status: { images: [{ image, phase, ...(phase === 'Failed' ? { message: 'manifest unknown' } : {}) }] },
  };
  await rest().patch(imageListRef(node, 'status'), body, 'application/apply-patch+yaml', { fieldManager: `it-daemon-${image.split(':')[1] ?? ''}` });
}

afterAll(async () => {
  // Leave the sandbox's ImageLists as found: the person's entries go, and ImageLists left empty are deleted.
  for (const node of sandbox().nodeNames) {
    await rest()
      .apply(imageListRef(node), { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: node } }, PERSON)
      .catch(() => undefined);
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

describe('image pre-warming', () => {
  it("two Apps on the same nodes: each App's entries come and go on their own, and a person's entry survives both", async () => {
    const a = uniqueName('pwa');
    const b = uniqueName('pwb');
    await createApp(ctl.ns, a, spec(a, { parallelism: 3 }));
    await createApp(ctl.ns, b, { ...spec(b, { parallelism: 3 }), template: spreadTemplate(b, 'v1', 'registry.example.com/team/init:b1') });
    const [sa, sb] = await Promise.all([settled(ctl.ns, a), settled(ctl.ns, b)]);
    const nodes = nodesOf(sa);
    expect(nodesOf(sb)).toEqual(nodes);
    expect(new Set(nodes).size).toBe(3);
    // A person pre-pulls A's next image and a tool of their own on one node, with their own field manager.
    const personal = nodes[0] ?? '';
    const personBody = {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: personal },
      spec: { images: [{ image: image('v2') }, { image: TOOL }] },
    };
    await rest().apply(imageListRef(personal), personBody, PERSON);

    // A rollout that waits (paused): every pod's node gets the new image, for A only.
    await patchApp(ctl.ns, a, { template: spreadTemplate(a, 'v2'), updateStrategy: { rollingUpdate: { paused: true } } });
    await eventually(`A's entries on ${nodes.join(', ')}`, async () => (sorted(await prewarmHeldBy(ctl.ns, a)).join() === nodes.join() ? true : undefined));
    for (const images of Object.values(await prewarmHeldBy(ctl.ns, a))) expect(images).toContain(image('v2'));
    await patchApp(ctl.ns, b, { template: spreadTemplate(b, 'v2', INIT_B), updateStrategy: { rollingUpdate: { paused: true } } });
    await eventually(`B's entries on ${nodes.join(', ')}`, async () => (sorted(await prewarmHeldBy(ctl.ns, b)).join() === nodes.join() ? true : undefined));
    const shared = (await imageLists()).find((l) => l.metadata.name === personal);
    expect(managersOf(shared!)).toEqual(expect.arrayContaining([PERSON, prewarmFieldManager(ctl.ns, a), prewarmFieldManager(ctl.ns, b)]));
    // Each App wrote when it asked, under its label's key (the clock of the daemon's answer timeout).
    expect(requestTimes(shared!)).toEqual([prewarmLabelKey(ctl.ns, a), prewarmLabelKey(ctl.ns, b)].sort());
    const statusA = await until(ctl.ns, a, (s) => s.app.status?.prewarm?.nodesRequested === 3);
    expect(statusA.app.status?.prewarm).toEqual({ nodesRequested: 3, nodesPulled: 0, nodesFailed: 0 });
    expect(statusA.app.status?.conditions).toContainEqual(expect.objectContaining({ type: 'ImagesPrewarmed', status: 'False', reason: 'ImagesPulling' }));

    // A finishes: its entries and label go; B's entries (the same image included) and the person's stay.
    await patchApp(ctl.ns, a, { updateStrategy: { rollingUpdate: { paused: false } } });
    await settled(ctl.ns, a, undefined, 90_000);
    await eventually("A's entries cleared", async () => (sorted(await prewarmHeldBy(ctl.ns, a)).length === 0 ? true : undefined));
    const afterA = await allImages();
    for (const n of nodes) expect(afterA[n], n).toEqual(n === personal ? [INIT_B, image('v2'), TOOL].sort() : [INIT_B, image('v2')].sort());
    expect((await until(ctl.ns, a, (s) => s.app.status?.prewarm === undefined)).app.status?.conditions?.some((c) => c.type === 'ImagesPrewarmed')).toBe(false);

    // B finishes: only the person's entries are left.
    await patchApp(ctl.ns, b, { updateStrategy: { rollingUpdate: { paused: false } } });
    await settled(ctl.ns, b, undefined, 90_000);
    await eventually("B's entries cleared", async () => (sorted(await prewarmHeldBy(ctl.ns, b)).length === 0 ? true : undefined));
    const afterB = await allImages();
    for (const n of nodes) expect(afterB[n] ?? [], n).toEqual(n === personal ? [image('v2'), TOOL].sort() : []);
    const left = (await imageLists()).find((l) => l.metadata.name === personal);
    expect(managersOf(left!).filter((m) => m.startsWith('ebb-prewarm/'))).toEqual([]);
    // The request times went with the entries.
    expect(requestTimes(left!)).toEqual([]);
  });

  it('a canary pause: every remaining pod’s node holds the new image, with no daemon reporting anything', async () => {
    const name = uniqueName('pwc');
    await createApp(ctl.ns, name, spec(name, { parallelism: 3 }, { canary: { steps: [{ replicas: 1 }, { pause: {} }] } }));
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: spreadTemplate(name, 'c2') });
    const paused = await until(
      ctl.ns,
      name,
      (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.pausedAt !== undefined && s.app.status.readyReplicas === 3,
    );
    const remaining = paused.pods.filter((p) => p.metadata.labels?.['apps.ebb.dev/revision'] !== paused.app.status?.updateRevision);
    expect(remaining).toHaveLength(2);
    const want = remaining.map(nodeOf).sort();
    await eventually(`entries on ${want.join(', ')}`, async () => {
      const held = await prewarmHeldBy(ctl.ns, name);
      return want.every((n) => held[n]?.includes(image('c2'))) ? true : undefined;
    });
    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    await settled(ctl.ns, name, undefined, 90_000);
    await eventually('entries cleared', async () => (sorted(await prewarmHeldBy(ctl.ns, name)).length === 0 ? true : undefined));
  });

  it('parallelism 1: the next node is requested when the daemon reports the last one Pulled or Failed', async () => {
    const name = uniqueName('pwd');
    await createApp(ctl.ns, name, spec(name, { parallelism: 1 }, { paused: true }));
    const initial = await settled(ctl.ns, name);
    const byOrdinal = initial.pods.map(nodeOf);
    await patchApp(ctl.ns, name, { template: spreadTemplate(name, 'd2') });
    const first = byOrdinal[2] ?? '';
    await eventually('the first node requested', async () => (sorted(await prewarmHeldBy(ctl.ns, name)).join() === first ? true : undefined));
    // Nobody reports: nothing more is requested.
    await new Promise((r) => setTimeout(r, 1500));
    expect(sorted(await prewarmHeldBy(ctl.ns, name))).toEqual([first]);
    expect((await until(ctl.ns, name, (s) => s.app.status?.prewarm !== undefined)).app.status?.prewarm).toEqual({
      nodesRequested: 1,
      nodesPulled: 0,
      nodesFailed: 0,
    });

    await report(first, image('d2'), 'Pulled');
    const second = byOrdinal[1] ?? '';
    await eventually('the second node requested', async () =>
      sorted(await prewarmHeldBy(ctl.ns, name)).join() === [first, second].sort().join() ? true : undefined,
    );
    await report(second, image('d2'), 'Failed');
    await eventually('the third node requested', async () => (sorted(await prewarmHeldBy(ctl.ns, name)).length === 3 ? true : undefined));
    const s = await until(ctl.ns, name, (x) => x.app.status?.prewarm?.nodesRequested === 3);
    expect(s.app.status?.prewarm).toEqual({ nodesRequested: 3, nodesPulled: 1, nodesFailed: 1 });

    await patchApp(ctl.ns, name, { updateStrategy: { rollingUpdate: { paused: false } } });
    await settled(ctl.ns, name, undefined, 90_000);
    await eventually('entries cleared', async () => (sorted(await prewarmHeldBy(ctl.ns, name)).length === 0 ? true : undefined));
  });
});
