/**
 * An ImagePullJob on the sandbox: three simulated nodes of this file's own, each with its node daemon (in this
 * process), two of them labelled. The job selects those two by label; the real watcher and worker carry it out
 * through the two nodes' ImageLists; the daemons pull and report; the job counts succeeded=2 and completes; the
 * third node is never touched; after ttlSecondsAfterFinished the job is deleted and its entries are gone. The
 * nodes carry the dedicated NoSchedule taint, which the jobs tolerate; a node with a taint a job does not
 * tolerate is left out by it and counted in its status.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, IMAGE_PULL_JOB_KIND, imagePullJobRef } from '../../../src/api/group.ts';
import type { ImagePullJob } from '../../../src/api/image-pull-job.ts';
import { pullJobLabelKey } from '../../../src/api/pull-job-keys.ts';
import { createLogger } from '../../../src/common/log.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { startNodeDaemons, type NodeDaemons } from '../../../harness/sandbox/daemons.ts';
import { useController } from '../app/harness.ts';
import { rejection, sandbox } from '../support.ts';
import { DEDICATED_TAINT_KEY, startDedicatedNode, type DedicatedNode } from './dedicated-node.ts';
import { deleteList, readList } from './helpers.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ctl = useController('pulljob');
const tag = randomBytes(3).toString('hex');
const IMAGE = `registry.example.com/pulljob/warm:${tag}`;
const LABEL = `pulljob.test.ebb.dev/${tag}`;
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';
/** The dedicated nodes' own taint: every job here tolerates it. */
const DEDICATED = { key: DEDICATED_TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' };
/** Generous: the machine may be busy with other runs. */
const WAIT = { timeoutMs: 90_000, intervalMs: 250 };

async function readJob(ns: string, name: string): Promise<ImagePullJob | undefined> {
  try {
    return await sandbox().rest.get<ImagePullJob>(imagePullJobRef(ns, name));
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

function createJob(ns: string, name: string, spec: Record<string, unknown>): Promise<ImagePullJob> {
  const body = { apiVersion: API_VERSION, kind: IMAGE_PULL_JOB_KIND, metadata: { name }, spec: { tolerations: [DEDICATED], ...spec } };
  return sandbox().rest.create<ImagePullJob>(imagePullJobRef(ns), body);
}

describe('an ImagePullJob on two of three nodes by label', () => {
  const nodes: DedicatedNode[] = [];
  let daemons: NodeDaemons | undefined;

  beforeAll(async () => {
    for (const index of [81, 82, 83]) nodes.push(await startDedicatedNode({ prefix: 'it-pulljob', index, timings: { pullMs: 300 } }));
    daemons = await startNodeDaemons({
      kubeconfig: sandbox().kubeconfig,
      nodes: nodes.map((n) => n.node),
      log: createLogger('daemon', 'warn'),
      options: { statusFlushMs: 200 },
    });
    for (const n of nodes.slice(0, 2))
      await sandbox().rest.patch(core('nodes', undefined, n.name), { metadata: { labels: { [LABEL]: 'yes' } } }, PatchType.merge);
  }, 120_000);

  afterAll(async () => {
    await daemons?.stop();
    for (const n of nodes) await deleteList(n.name);
    for (const n of nodes) await n.stop();
  }, 120_000);

  it('refuses a bad image reference and a change of images, with clear messages', async () => {
    const bad = await rejection(createJob(ctl.ns, 'bad', { images: ['Not A Reference'] }));
    expect(bad.message).toContain('spec.images[0]');
    await createJob(ctl.ns, 'fixed', { images: [IMAGE], nodeSelector: { [LABEL]: 'nobody' } });
    const change = await rejection(sandbox().rest.patch(imagePullJobRef(ctl.ns, 'fixed'), { spec: { images: [`${IMAGE}-2`] } }, PatchType.merge));
    expect(change.message).toContain('images is immutable');
    // The sample in deploy/samples is accepted as written.
    const sample = parse(readFileSync(join(ROOT, 'deploy', 'samples', 'imagepulljob.yaml'), 'utf8')) as Record<string, unknown>;
    await sandbox().rest.create(imagePullJobRef(ctl.ns), sample, { dryRun: 'All' });
  });

  it('reaches succeeded=2 and Complete, leaves the third node untouched, and is gone with its entries after its TTL', async () => {
    const [a, b, c] = nodes as [DedicatedNode, DedicatedNode, DedicatedNode];
    const name = `warm-${tag}`;
    await createJob(ctl.ns, name, { images: [IMAGE], nodeSelector: { [LABEL]: 'yes' }, parallelism: 1, ttlSecondsAfterFinished: 4 });

    const done = await waitFor(
      async () => {
        const job = await readJob(ctl.ns, name);
        return job?.status?.conditions?.some((x) => x.type === 'Complete' && x.status === 'True') ? job : undefined;
      },
      { ...WAIT, what: `ImagePullJob ${name} Complete` },
    );
    expect(done.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0, active: 0 });
    const { desired, active, succeeded, failed } = done.status ?? {};
    process.stdout.write(`ImagePullJob ${name}: desired=${desired} active=${active} succeeded=${succeeded} failed=${failed}, Complete=True\n`);
    expect(done.status?.failedNodes ?? []).toEqual([]);
    expect(done.status?.conditions?.find((x) => x.type === 'Complete')).toMatchObject({ reason: 'AllNodesPulled' });
    // The two labelled nodes hold the image, pulled once each by their daemon; the third pulled nothing.
    for (const n of [a, b]) expect(n.node.store.status(IMAGE), `${IMAGE} on ${n.name}`).toBeDefined();
    expect(c.node.store.status(IMAGE)).toBeUndefined();
    expect(c.node.store.pullRequests).toBe(0);
    const third = await readList(c.name);
    expect(third?.spec?.images?.some((e) => e.image === IMAGE) ?? false).toBe(false);
    expect(third?.metadata.labels?.[pullJobLabelKey(ctl.ns, name)]).toBeUndefined();

    await waitFor(async () => ((await readJob(ctl.ns, name)) === undefined ? true : undefined), { ...WAIT, what: `ImagePullJob ${name} deleted by its TTL` });
    for (const n of [a, b]) {
      const list = await waitFor(
        async () => {
          const l = await readList(n.name);
          const held = l?.spec?.images?.some((e) => e.image === IMAGE) === true || l?.metadata.labels?.[pullJobLabelKey(ctl.ns, name)] !== undefined;
          return held ? undefined : { images: l?.spec?.images ?? [] };
        },
        { ...WAIT, what: `the job's entries gone from ${n.name}` },
      );
      expect(list.images.map((e) => e.image)).not.toContain(IMAGE);
    }
    // Completion event, read back from the apiserver.
    const events = await sandbox().rest.list<{ reason: string; regarding?: { name?: string } }>({
      group: 'events.k8s.io',
      version: 'v1',
      resource: 'events',
      namespace: ctl.ns,
    });
    expect(events.items.filter((e) => e.regarding?.name === name).map((e) => e.reason)).toEqual(expect.arrayContaining(['Started', 'Completed']));
  }, 240_000);

  it('with completionPolicy Never, warms a node that gains the label later; deleting the job clears its entries', async () => {
    const [a, , c] = nodes as [DedicatedNode, DedicatedNode, DedicatedNode];
    const name = `keep-${tag}`;
    const label = `${LABEL}-keep`;
    const image = `${IMAGE}-keep`;
    const status = (want: { desired: number; succeeded: number }) =>
      waitFor(
        async () => {
          const st = (await readJob(ctl.ns, name))?.status;
          return st?.desired === want.desired && st.succeeded === want.succeeded ? st : undefined;
        },
        { ...WAIT, what: `ImagePullJob ${name} at ${JSON.stringify(want)}` },
      );
    await sandbox().rest.patch(core('nodes', undefined, a.name), { metadata: { labels: { [label]: 'yes' } } }, PatchType.merge);
    await createJob(ctl.ns, name, { images: [image], nodeSelector: { [label]: 'yes' }, completionPolicy: 'Never' });
    const first = await status({ desired: 1, succeeded: 1 });
    expect(first.conditions?.find((x) => x.type === 'Complete')).toMatchObject({ status: 'False', reason: 'NeverCompletes' });
    expect(c.node.store.status(image)).toBeUndefined();

    // The node's label change reaches the job through the watcher's Node watch: nothing else changes.
    await sandbox().rest.patch(core('nodes', undefined, c.name), { metadata: { labels: { [label]: 'yes' } } }, PatchType.merge);
    await status({ desired: 2, succeeded: 2 });
    expect(c.node.store.status(image)).toBeDefined();
    // What `kubectl get ebpull` prints: the printer columns, as the apiserver renders them.
    const table = (await sandbox().rest.list(imagePullJobRef(ctl.ns), { fieldSelector: `metadata.name=${name}` }, undefined, TABLE)) as unknown as {
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };
    expect(table.columnDefinitions.map((d) => d.name)).toEqual(['Name', 'Desired', 'Active', 'Succeeded', 'Failed', 'Complete', 'Age', 'Policy']);
    expect(table.rows[0]?.cells.slice(0, 6)).toEqual([name, 2, 0, 2, 0, 'False']);

    await sandbox().rest.delete(imagePullJobRef(ctl.ns, name));
    for (const n of [a, c])
      await waitFor(async () => ((await readList(n.name))?.spec?.images?.some((e) => e.image === image) ? undefined : true), {
        ...WAIT,
        what: `the deleted job's entries gone from ${n.name}`,
      });
  }, 240_000);

  it('leaves out a node with a taint the job does not tolerate: the tolerating job reaches both nodes, the other only the one it tolerates', async () => {
    const [a, b] = nodes as [DedicatedNode, DedicatedNode];
    const label = `${LABEL}-taint`;
    const extra = { key: `pulljob.test.ebb.dev/extra-${tag}`, value: 'x', effect: 'NoSchedule' };
    const node = await sandbox().rest.get<{ spec?: { taints?: object[] } }>(core('nodes', undefined, b.name));
    await sandbox().rest.patch(core('nodes', undefined, b.name), { spec: { taints: [...(node.spec?.taints ?? []), extra] } }, PatchType.merge);
    for (const n of [a, b]) await sandbox().rest.patch(core('nodes', undefined, n.name), { metadata: { labels: { [label]: 'yes' } } }, PatchType.merge);
    const both = `both-${tag}`;
    const plain = `plain-${tag}`;
    await createJob(ctl.ns, both, {
      images: [`${IMAGE}-both`],
      nodeSelector: { [label]: 'yes' },
      tolerations: [DEDICATED, { key: extra.key, operator: 'Exists' }],
    });
    await createJob(ctl.ns, plain, { images: [`${IMAGE}-plain`], nodeSelector: { [label]: 'yes' } });
    const complete = (name: string) =>
      waitFor(
        async () => {
          const job = await readJob(ctl.ns, name);
          return job?.status?.conditions?.some((x) => x.type === 'Complete' && x.status === 'True') ? job.status : undefined;
        },
        { ...WAIT, what: `ImagePullJob ${name} Complete` },
      );
    expect(await complete(both)).toMatchObject({ desired: 2, succeeded: 2, untolerated: 0 });
    const done = await complete(plain);
    expect(done).toMatchObject({ desired: 1, succeeded: 1, untolerated: 1 });
    expect(done.conditions?.find((x) => x.type === 'Complete')?.message).toContain(
      '1 node left out: a NoSchedule or NoExecute taint the job does not tolerate',
    );
    for (const n of [a, b]) expect(n.node.store.status(`${IMAGE}-both`), `${IMAGE}-both on ${n.name}`).toBeDefined();
    expect(a.node.store.status(`${IMAGE}-plain`)).toBeDefined();
    expect(b.node.store.status(`${IMAGE}-plain`), 'the job without the toleration never pulls on the tainted node').toBeUndefined();
    expect((await readList(b.name))?.metadata.labels?.[pullJobLabelKey(ctl.ns, plain)]).toBeUndefined();
  }, 240_000);
});
