/**
 * Scenario tests of image pre-warming: the real planner and executor on the fake apiserver, whose ImageLists
 * keep per-field-manager ownership like server-side apply. Pod `web-<i>` runs on node `node-<i>`; the tests
 * play the node daemon by setting image phases.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { prewarmLabelKey } from '../../../src/api/prewarm-keys.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { appReconciler } from '../../../src/workers/app/reconcile.ts';
import { getOrdinal } from '../../../src/workers/app/pods/predicates.ts';
import { NS } from './fixtures.ts';
import { Scenario } from './scenario.ts';
import type { PullBudget, PullBudgetRequest } from '../../../src/workers/shared/pull-budget.ts';
import { ENTRIES_RETRY } from '../../../src/workers/app/prewarm/grant.ts';
import { timerId } from '../../../src/queue/names.ts';

const image = (tag: string) => `registry.example/web:${tag}`;
const template = (tag: string) => ({ template: { spec: { containers: [{ name: 'main', image: image(tag) }] } } });
const MANAGER = 'ebb-prewarm/ns/web';
const LABEL = prewarmLabelKey(NS, 'web');

/** The scheduler: every pod without a node goes to node-<ordinal>. */
function schedule(s: Scenario): void {
  for (const [k, pod] of s.cluster.pods) {
    if (!pod.spec?.['nodeName']) s.cluster.pods.set(k, { ...pod, spec: { ...pod.spec, nodeName: `node-${getOrdinal('web', pod.metadata.name)}` } });
  }
}

async function run(s: Scenario, done: (s: Scenario) => boolean, each: (s: Scenario) => void = () => undefined, max = 200): Promise<void> {
  for (let i = 0; i < max; i++) {
    schedule(s);
    await s.step();
    each(s);
    if (done(s)) return;
  }
  throw new Error(`no convergence; status ${JSON.stringify(s.app().status)}`);
}

/** Nodes whose ImageList lists an entry of the App's field manager. */
function requested(s: Scenario): string[] {
  return s.cluster.imageLists.names().filter((n) => Object.values(s.cluster.imageLists.owners(n)).some((m) => m.includes(MANAGER)));
}

const condition = (s: Scenario) => s.app().status?.conditions?.find((c) => c.type === 'ImagesPrewarmed');

async function started(spec: Partial<AppSpec>): Promise<Scenario> {
  const s = new Scenario({ replicas: 4, podManagementPolicy: 'Parallel', ...spec });
  await run(s, (x) => x.converged());
  return s;
}

/** The budget as Redis keeps it, in memory: members `<holder>/<node>`, at most `limit`. */
function memoryBudget(limit: number): PullBudget & { held: Set<string> } {
  const held = new Set<string>();
  return {
    held,
    settle: (holder, { pulling, done, want }) => {
      for (const n of pulling) held.add(`${holder}/${n}`);
      for (const n of done) held.delete(`${holder}/${n}`);
      const granted = want.filter((n) => held.has(`${holder}/${n}`) || (held.size < limit && held.add(`${holder}/${n}`)));
      return Promise.resolve({ granted, ...(granted.length < want.length ? { limitedBy: 'budget' as const } : {}) });
    },
  };
}

describe('pre-warm', () => {
  it('defaults, nothing measured yet: every remaining node is requested as the rollout starts', async () => {
    const s = await started({ imagePrewarm: { enabled: true } });
    s.edit(template('v2'));
    schedule(s);
    await s.step();
    // web-3 is being updated; the nodes of web-2, web-1 and web-0 are asked for at once.
    expect(requested(s)).toEqual(['node-0', 'node-1', 'node-2']);
  });

  it('defaults within a pull budget of 2: two nodes at a time, the rest reported waiting and asked for as pulls end', async () => {
    const s = await started({ imagePrewarm: { enabled: true }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } });
    const budget = memoryBudget(2);
    budget.held.add('other/app/node-9');
    s.budget = budget;
    s.edit(template('v2'));
    schedule(s);
    await s.step();
    // Another App holds one share: one node now, and the condition says why the others wait.
    expect(requested(s)).toEqual(['node-3']);
    expect(condition(s)).toMatchObject({ status: 'False', reason: 'ImagesPulling' });
    expect(condition(s)?.message).toContain("3 more nodes wait for room in the cluster's pre-warm pull budget");
    budget.held.delete('other/app/node-9');
    await s.step();
    expect(requested(s)).toEqual(['node-2', 'node-3']);
    s.cluster.imageLists.setPhase('node-3', image('v2'), 'Pulled');
    await s.step();
    expect(requested(s)).toEqual(['node-1', 'node-2', 'node-3']);
    expect([...budget.held].sort()).toEqual(['ns/web/node-1', 'ns/web/node-2']);
    s.cluster.imageLists.setPhase('node-2', image('v2'), 'Failed', 'manifest unknown');
    s.cluster.imageLists.setPhase('node-1', image('v2'), 'Pulled');
    await s.step();
    expect(requested(s)).toEqual(['node-0', 'node-1', 'node-2', 'node-3']);
    s.cluster.imageLists.setPhase('node-0', image('v2'), 'Pulled');
    // The rollout goes on; at its end every share is given back.
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await run(s, (x) => x.converged() && requested(x).length === 0);
    expect(budget.held.size).toBe(0);
  });

  it('an earlier action that fails gives back the shares the plan loop was granted for the requests it left unwritten', async () => {
    const s = await started({ imagePrewarm: { enabled: true } });
    const budget = memoryBudget(4);
    s.budget = budget;
    s.tolerateErrors = true;
    s.cluster.calls.failNth('pods.delete', 1, new KubeError('Forbidden', 403, 'pods "web-3" is forbidden'));
    s.edit(template('v2'));
    schedule(s);
    const planned = await s.step();
    // The plan asked for three nodes and was granted them; the delete before the writes failed.
    const asked = planned?.actions.flatMap((a) => (a.kind === 'requestPrewarm' ? [a.node] : []));
    expect(asked?.sort()).toEqual(['node-0', 'node-1', 'node-2']);
    expect(s.errors).toHaveLength(1);
    expect(requested(s)).toEqual([]);
    expect([...budget.held]).toEqual([]);
    await s.step();
    expect(requested(s)).toEqual(['node-0', 'node-1', 'node-2']);
    expect([...budget.held].sort()).toEqual(['ns/web/node-0', 'ns/web/node-1', 'ns/web/node-2']);
  });

  it("past its namespace's ImageList entries: only what fits is requested, the kept entries are counted, and the condition names the limit", async () => {
    const s = await started({ imagePrewarm: { enabled: true }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } });
    const asked: PullBudgetRequest[] = [];
    // Room for one node's entries in the namespace.
    s.budget = {
      settle: (_holder, request) => {
        asked.push(request);
        const room = Math.max(0, 1 - (request.kept?.length ?? 0));
        const granted = request.want.slice(0, room);
        return Promise.resolve({ granted, ...(granted.length < request.want.length ? { limitedBy: 'namespaceEntries' as const } : {}) });
      },
    };
    s.edit(template('v2'));
    schedule(s);
    await s.step();
    expect(requested(s)).toEqual(['node-3']);
    expect(condition(s)?.message).toContain("3 more nodes wait for room in the namespace's ImageList entries");
    await s.step();
    expect(requested(s), 'nothing more past the cap').toEqual(['node-3']);
    expect(asked.at(-1)).toMatchObject({ kept: ['node-3'], entriesPerNode: 1 });
    expect(timerId({ kind: 'App', namespace: 'ns', name: 'web' }, ENTRIES_RETRY.reason)).toContain(ENTRIES_RETRY.reason);
  });

  it('with no daemon: the rollout completes, at most `parallelism` nodes are requested, and everything is cleared at the end', async () => {
    const s = await started({ imagePrewarm: { enabled: true, parallelism: 1, lookahead: 2 } });
    const v1 = s.app().status?.updateRevision;
    const listsBefore = s.cluster.calls.count('imageLists.list');
    expect(listsBefore).toBe(0);
    s.edit(template('v2'));
    let peak = 0;
    await run(
      s,
      (x) => x.converged() && x.app().status?.updateRevision !== v1,
      (x) => (peak = Math.max(peak, requested(x).length)),
    );
    expect(peak).toBe(1);
    // The node of web-2 (web-3 is updated first, so web-2 is the next pod).
    expect(s.cluster.imageLists.names()).toEqual(['node-2']);
    await s.step();
    expect(requested(s)).toEqual([]);
    expect(s.app().status?.prewarm).toBeUndefined();
    expect(s.app().status?.conditions?.some((c) => c.type === 'ImagesPrewarmed')).toBe(false);
    // Steady state: no more ImageList reads.
    const lists = s.cluster.calls.count('imageLists.list');
    for (let i = 0; i < 3; i++) await s.step();
    expect(s.cluster.calls.count('imageLists.list')).toBe(lists);
  });

  it('requests the next node as the daemon reports pulls done (Pulled or Failed), parallelism at a time', async () => {
    const s = await started({ imagePrewarm: { enabled: true, parallelism: 2 }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } });
    s.edit(template('v2'));
    const until = (want: string[]) => run(s, (x) => JSON.stringify(requested(x)) === JSON.stringify(want), undefined, 5);
    await until(['node-2', 'node-3']);
    await s.step();
    expect(requested(s)).toEqual(['node-2', 'node-3']);
    expect(s.app().status?.prewarm).toEqual({ nodesRequested: 2, nodesPulled: 0, nodesFailed: 0 });

    s.cluster.imageLists.setPhase('node-3', image('v2'), 'Pulled');
    await until(['node-1', 'node-2', 'node-3']);
    s.cluster.imageLists.setPhase('node-2', image('v2'), 'Failed', 'manifest unknown');
    await until(['node-0', 'node-1', 'node-2', 'node-3']);
    s.cluster.imageLists.setPhase('node-1', image('v2'), 'Pulled');
    s.cluster.imageLists.setPhase('node-0', image('v2'), 'Pulled');
    await s.step();
    expect(s.app().status?.prewarm).toEqual({ nodesRequested: 4, nodesPulled: 3, nodesFailed: 1 });
    expect(condition(s)).toMatchObject({ status: 'False', reason: 'ImagePullFailed' });
    expect(condition(s)?.message).toContain('failed on node-2 (registry.example/web:v2: manifest unknown)');
    // Nothing was updated while paused; resuming runs the rollout, and the entries go at its end.
    s.edit({ updateStrategy: { rollingUpdate: { paused: false } } });
    await run(s, (x) => x.converged() && requested(x).length === 0);
    expect(s.app().status?.prewarm).toBeUndefined();
  });

  it('a failed ImageList write neither stops the rollout nor drops status.prewarm; it is tried again', async () => {
    const s = await started({ imagePrewarm: { enabled: true, parallelism: 1 } });
    s.cluster.calls.failNth('imageLists.apply', 1, new KubeError('ServerError', 500, 'etcd timeout'));
    s.edit(template('v2'));
    schedule(s);
    await s.step();
    expect(s.cluster.podDeletions).toEqual(['web-3']);
    expect(requested(s)).toEqual([]);
    expect(condition(s)).toMatchObject({ status: 'False', reason: 'PrewarmRequestFailed' });
    expect(condition(s)?.message).toContain('etcd timeout');
    expect(s.app().status?.prewarm).toBeDefined();
    await s.step();
    expect(requested(s)).toEqual(['node-2']);
  });

  it("clears only its own entries: a person's entry for the same image stays", async () => {
    const s = await started({ imagePrewarm: { enabled: true, parallelism: 4 }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } });
    s.cluster.imageLists.apply('node-3', { spec: { images: [{ image: image('v2') }] } }, 'person');
    s.edit(template('v2'));
    await run(s, (x) => requested(x).length === 4, undefined, 5);
    expect(s.cluster.imageLists.owners('node-3')).toEqual({ [image('v2')]: [MANAGER, 'person'] });
    expect(Object.keys(s.cluster.imageLists.get('node-3')?.metadata.labels ?? {})).toEqual([LABEL]);
    s.edit({ imagePrewarm: { enabled: false } });
    await s.step();
    expect(requested(s)).toEqual([]);
    expect(s.cluster.imageLists.owners('node-3')).toEqual({ [image('v2')]: ['person'] });
    expect(s.cluster.imageLists.get('node-3')?.metadata.labels).toEqual({});
  });

  it('the reconcile of a deleted App clears its entries; an ImageList deleted meanwhile is not created again', async () => {
    const s = await started({ imagePrewarm: { enabled: true, parallelism: 4 }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } });
    s.edit(template('v2'));
    await run(s, (x) => requested(x).length === 4, undefined, 5);
    s.cluster.deleteApp(NS, 'web');
    s.cluster.imageLists.remove('node-0');
    const reconcile = appReconciler(() => s.cluster.client());
    const ctx = { rest: undefined as never, log: pino({ level: 'silent' }), signal: new AbortController().signal, now: s.clock.now };
    await reconcile({ kind: 'App', namespace: NS, name: 'web' }, ctx);
    expect(requested(s)).toEqual([]);
    expect(s.cluster.imageLists.names()).toEqual(['node-1', 'node-2', 'node-3']);
  });
});
