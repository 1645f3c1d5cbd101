/**
 * Spec fuzzing against the real apiserver: over a thousand generated Apps (valid, edge, invalid) and a few
 * hundred ImageLists from a seeded generator (`EBB_FUZZ_SEED` replays a run; the seed is in every failure).
 * Each is refused at admission naming the field, or accepted; a sample of the accepted Apps is created for real
 * and the worker must bring each to Ready or to a condition that explains why not, then roll out a new image
 * the same way, without reconciling in a loop, without a reconcile failing on something other than an
 * apiserver answer, and with flat memory. Edits of their immutable fields are refused naming the field.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/api/app.ts';
import { appRef, imageListRef } from '../../../src/api/group.ts';
import { errorMessage } from '../../../src/common/errors.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { sandbox } from '../support.ts';
import { createApp, settled, uniqueName, useController } from '../app/harness.ts';
import { mapLimit, submit, verdictProblem, type Verdict } from './admission.ts';
import { forRealCreation, generateAppCases, type SpecCase } from './app-cases.ts';
import { generateImageListCases } from './image-list-cases.ts';
import { memorySample, type MemorySample } from './memory.ts';
import { outcomeOf, rolloutOutcomeOf, tally } from './outcome.ts';
import { fuzzSeed, rng } from './prng.ts';
import { reconcileLog } from './reconcile-log.ts';

const APP_CASES = 1_100;
const IMAGE_LIST_CASES = 300;
/** Apps created for real (the rest are server-side dry runs). */
const REAL_APPS = 60;
/** A quiet window after every created App has its outcome: no App may reconcile more often than this in it. */
const QUIET_WINDOW_MS = 15_000;
const MAX_RECONCILES_IN_QUIET_WINDOW = 3;
/**
 * Growth allowed over the whole run in this process (watcher, worker and test together), after full
 * collections: the heap (the cases themselves are a few MiB), and RSS, which V8 and the HTTP client's buffers
 * give back to the system only slowly after the run's bodies of up to a few hundred KiB.
 */
const MAX_HEAP_GROWTH_MIB = 48;
const MAX_RSS_GROWTH_MIB = 256;

const seed = fuzzSeed();
const at = `(seed ${seed}: replay with EBB_FUZZ_SEED=${seed})`;
process.stdout.write(`spec fuzz seed ${seed}\n`);
const logs = reconcileLog();
const ctl = useController('fuzz', { log: logs.log, env: { EBB_QUEUE_BACKOFF_BASE: '200ms', EBB_QUEUE_BACKOFF_MAX: '2s' } });
const figures: Record<string, unknown> = { seed };
afterAll(() => process.stdout.write(`spec fuzz figures ${JSON.stringify(figures)}\n`));

/** An App with no outcome fails the test once no App has found one for this long (slower under load, never stuck). */
const NO_PROGRESS_MS = 90_000;

/**
 * Polls until `judge` gives every listed App an outcome; fails when a poll has found no new outcome for
 * NO_PROGRESS_MS (a loaded machine makes the Apps slower, not stuck), describing the Apps without one.
 */
async function outcomesOf(
  list: () => Promise<App[]>,
  count: number,
  judge: (a: App) => string | undefined,
  describe: (a: App) => string,
  what: string,
): Promise<Map<string, string>> {
  const outcomes = new Map<string, string>();
  let progressAt = Date.now();
  while (outcomes.size < count) {
    const before = outcomes.size;
    for (const app of await list()) {
      const o = judge(app);
      if (o) outcomes.set(app.metadata.name ?? '', o);
    }
    if (outcomes.size > before) progressAt = Date.now();
    if (outcomes.size === count) break;
    if (Date.now() - progressAt > NO_PROGRESS_MS) {
      const open = (await list()).filter((a) => !outcomes.has(a.metadata.name ?? ''));
      throw new Error(`${at} no new outcome for ${NO_PROGRESS_MS} ms waiting for ${what}; no outcome: ${open.map(describe).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return outcomes;
}

const summary = (c: SpecCase, v: Verdict): string => `#${c.id} ${c.category} ${c.what} -> ${v.accepted ? 'accepted' : `refused: ${v.message.slice(0, 300)}`}`;

describe('spec fuzz', () => {
  let before: MemorySample;
  const real: SpecCase[] = [];
  const created: SpecCase[] = [];

  it('refuses every invalid App naming the field, accepts every valid one', async () => {
    const { rest } = sandbox();
    // Warm-up: one App to Ready, so the worker's one-time allocations are in the baseline.
    const warm = uniqueName('warm');
    await createApp(ctl.ns, warm, { replicas: 1 });
    await settled(ctl.ns, warm);
    before = memorySample();
    const cases = generateAppCases(rng(seed), APP_CASES, `fz${(seed % 1_000_000).toString(36)}`);
    const started = Date.now();
    const verdicts = await mapLimit(cases, 6, (c) => submit(rest, appRef(ctl.ns), c.body, true));
    figures['appDryRunMs'] = Date.now() - started;
    const problems: string[] = [];
    cases.forEach((c, i) => {
      const v = verdicts[i] as Verdict;
      const problem = verdictProblem(c.expect, v);
      if (problem) problems.push(`${summary(c, v)}: ${problem}`);
      if (v.accepted && c.realizable && c.category !== 'invalid') real.push(c);
    });
    figures['apps'] = tally(cases.map((c, i) => `${c.category}/${(verdicts[i] as Verdict).accepted ? 'accepted' : 'refused'}`));
    const edges = cases.flatMap((c, i) =>
      c.category === 'edge' ? [`${c.what.split(' = ')[0] ?? ''}: ${(verdicts[i] as Verdict).accepted ? 'accepted' : 'refused'}`] : [],
    );
    figures['edges'] = tally(edges);
    expect(problems, at).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(1_000);
  });

  it('reconciles a sample of the accepted Apps to Ready or to a condition that says why not, without loops', async () => {
    const { rest } = sandbox();
    // Edge cases first: they are the ones most likely to surprise the worker.
    const sample = [...real.filter((c) => c.category === 'edge'), ...real.filter((c) => c.category === 'valid')].slice(0, REAL_APPS);
    created.push(...sample);
    for (const c of sample) {
      const v = await submit(rest, appRef(ctl.ns), forRealCreation(c), false);
      expect(v.accepted, `${at} #${c.id} ${c.what}: ${v.accepted ? '' : v.message}`).toBe(true);
    }
    const names = new Map(sample.map((c) => [(c.body['metadata'] as { name: string }).name, c]));
    const list = async (): Promise<App[]> => (await rest.list<App>(appRef(ctl.ns))).items.filter((a) => names.has(a.metadata.name ?? ''));
    const describeApp = (a: App): string => `#${names.get(a.metadata.name ?? '')?.id} ${names.get(a.metadata.name ?? '')?.what}: ${JSON.stringify(a.status)}`;
    const outcomes = await outcomesOf(list, names.size, outcomeOf, describeApp, 'every created App Ready or explained');
    figures['created'] = tally([...outcomes.values()]);
    figures['createdByCase'] = Object.fromEntries([...outcomes].map(([n, o]) => [`#${names.get(n)?.id} ${names.get(n)?.what}`, o]));

    // A new image for every App that got Ready: rolling, in-place, canary (steps in any order), partitions, OnDelete.
    const ready = (await list()).filter((a) => outcomes.get(a.metadata.name ?? '') === 'Ready');
    for (const app of ready) {
      const containers = app.spec.template.spec.containers.map((c, i) => (i === 0 ? { ...c, image: 'registry.example.com/team/web:rollout' } : c));
      await rest.patch(appRef(ctl.ns, app.metadata.name), { spec: { template: { spec: { containers } } } }, PatchType.merge);
    }
    const rolledNames = new Set(ready.map((a) => a.metadata.name ?? ''));
    const listRolled = async (): Promise<App[]> => (await list()).filter((a) => rolledNames.has(a.metadata.name ?? ''));
    const rolled = await outcomesOf(listRolled, rolledNames.size, rolloutOutcomeOf, describeApp, 'every edited App rolled out or explained');
    figures['rolledOut'] = tally([...rolled.values()]);

    const quietFrom = Date.now();
    await new Promise((r) => setTimeout(r, QUIET_WINDOW_MS));
    const busy = [...names.keys()].map((n) => [n, logs.startsBetween(n, quietFrom)] as const).filter(([, n]) => n > MAX_RECONCILES_IN_QUIET_WINDOW);
    expect(busy, `${at} Apps reconciled more than ${MAX_RECONCILES_IN_QUIET_WINDOW} times in ${QUIET_WINDOW_MS} ms once settled`).toEqual([]);
    const perApp = [...names.keys()].map((n) => logs.startsBetween(n, 0));
    figures['reconcilesPerCreatedApp'] = { max: Math.max(...perApp), total: perApp.reduce((a, b) => a + b, 0) };
    // A failed reconcile carries the apiserver's error code; one without threw a bug of the worker.
    const bugs = logs.failures.filter((f) => f.code === undefined);
    expect(bugs, at).toEqual([]);
    figures['failedReconciles'] = tally(logs.failures.map((f) => f.code ?? 'none'));
  }, 420_000);

  it('refuses edits of immutable fields of the created Apps naming the field (dry run)', async () => {
    const { rest } = sandbox();
    const r = rng(seed ^ 0xed17);
    const edits: [field: string, patch: (name: string) => Record<string, unknown>][] = [
      ['spec.selector', (name) => ({ selector: { matchLabels: { app: name, extra: 'x' } } })],
      ['spec.serviceName', () => ({ serviceName: `other-${r.string(6)}` })],
      ['spec.podManagementPolicy', () => ({ podManagementPolicy: r.pick(['OrderedReady', 'Parallel']) })],
      ['spec.volumeClaimTemplates', () => ({ volumeClaimTemplates: [{ metadata: { name: `d${r.string(4)}` }, spec: { accessModes: ['ReadWriteOnce'] } }] })],
    ];
    const problems: string[] = [];
    for (const c of created) {
      const name = (c.body['metadata'] as { name: string }).name;
      const app = await rest.get<App>(appRef(ctl.ns, name));
      const [field, patch] = r.pick(edits);
      const body = patch(name);
      // A policy edit that keeps the value is no change: pick the other value.
      if (field === 'spec.podManagementPolicy') body['podManagementPolicy'] = app.spec.podManagementPolicy === 'Parallel' ? 'OrderedReady' : 'Parallel';
      const verdict = await rest.patch(appRef(ctl.ns, name), { spec: body }, PatchType.merge, { dryRun: 'All', fieldValidation: 'Strict' }).then(
        () => 'accepted',
        (err: unknown) => errorMessage(err),
      );
      if (!verdict.includes(field) || !verdict.includes('immutable')) problems.push(`#${c.id} edit of ${field}: ${verdict}`);
    }
    expect(problems, at).toEqual([]);
  });

  it('refuses every invalid ImageList entry naming the field', async () => {
    const { rest } = sandbox();
    const cases = generateImageListCases(rng(seed ^ 0x5eed), IMAGE_LIST_CASES, `fz${(seed % 1_000_000).toString(36)}`);
    const verdicts = await mapLimit(cases, 6, (c) => submit(rest, imageListRef(), c.body, true));
    const problems = cases.flatMap((c, i) => {
      const v = verdicts[i] as Verdict;
      const p = verdictProblem(c.expect, v);
      return p ? [`#${c.id} ${c.what}: ${p}`] : [];
    });
    figures['imageLists'] = tally(
      cases.map((c, i) => `${c.what === 'valid' ? 'valid' : 'invalid'}/${(verdicts[i] as Verdict).accepted ? 'accepted' : 'refused'}`),
    );
    expect(problems, at).toEqual([]);
  });

  it('keeps the worker alive and its memory flat', async () => {
    const name = uniqueName('alive');
    await createApp(ctl.ns, name, { replicas: 1 });
    await settled(ctl.ns, name);
    const after = memorySample();
    figures['memory'] = { before, after };
    expect(after.heapMiB - before.heapMiB, at).toBeLessThan(MAX_HEAP_GROWTH_MIB);
    expect(after.rssMiB - before.rssMiB, at).toBeLessThan(MAX_RSS_GROWTH_MIB);
  });
});
