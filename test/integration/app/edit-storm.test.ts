/**
 * Edit storm: during a 20-replica rollout, eight people edit the App at once as `kubectl edit` does
 * (read, change, merge patch with the resourceVersion read as precondition, retry on 409): labels,
 * annotations, replicas, partition, the paused flag, and the template twice more. The App converges to the
 * last spec written, every person's last write is in the final object, the pod watch never sees two live
 * pods for one ordinal nor a pod created twice for one ordinal at one revision, and the 409s the people got
 * and the worker's retries are reported. EBB_STORM_SEED sets the seed of the people's pauses.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { seededRandom, between } from '../../../harness/sandbox/faults.ts';
import { sandbox } from '../support.ts';
import { createApp, getApp, image, isSettled, patchApp, revisionOf, settled, template, uniqueName, until, useController } from './harness.ts';
import { captureLog } from './log-capture.ts';
import { recordPods } from './pod-history.ts';
import { duplicateCreations, podLedger, rollingUpdate, runClient, type StormClient } from './storm-clients.ts';

const SEED = Number(process.env['EBB_STORM_SEED'] ?? '12');
const logs = captureLog('it-storm', 'warn');
const ctl = useController('storm', { log: logs.log });

const REPLICAS = [22, 18, 21, 19, 20, 21];
const PARTITIONS = [15, 8, 4, 0];
const PAUSED = [true, false, true, false];
const LABEL = 'storm.ebb.dev';

function clients(name: string): StormClient[] {
  const labels = (who: string): StormClient => ({
    name: `labels-${who}`,
    writes: [1, 2, 3, 4, 5, 6].map((n) => ({ metadata: { labels: { [`${LABEL}/${who}`]: `${who}${n}` } } })),
  });
  const annotations = (who: string): StormClient => ({
    name: `annotations-${who}`,
    writes: [1, 2, 3, 4, 5, 6].map((n) => ({ metadata: { annotations: { [`${LABEL}/note-${who}`]: `${who} note ${n}` } } })),
  });
  return [
    labels('alice'),
    labels('bob'),
    annotations('carol'),
    annotations('dave'),
    { name: 'replicas', writes: REPLICAS.map((replicas) => ({ spec: { replicas } })) },
    { name: 'partition', writes: PARTITIONS.map((partition) => rollingUpdate({ partition })) },
    { name: 'paused', writes: PAUSED.map((paused) => rollingUpdate({ paused })) },
    { name: 'template', writes: ['v3', 'v4'].map((tag) => ({ spec: { template: template(name, tag) } })) },
  ];
}

describe('edit storm during a rollout', () => {
  it('converges to the last spec written, loses no write, creates no pod twice', async () => {
    const { ns } = ctl;
    const rest = sandbox().rest;
    const name = uniqueName('storm');
    const spec = { replicas: 20, podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 4 } } };
    await createApp(ns, name, spec as Partial<AppSpec>);
    await settled(ns, name, undefined, 120_000);
    const ledger = podLedger();
    const history = await recordPods(ns, name, ledger.onSeen);
    const failedBefore = logs.count('reconcile failed');
    const started = Date.now();

    await patchApp(ns, name, { template: template(name, 'v2') });
    const random = seededRandom(SEED);
    const pause = (): number => between(random, 100, 700);
    const results = await Promise.all(clients(name).map((c) => runClient(rest, ns, name, c, pause)));
    const stormMs = Date.now() - started;

    const done = await until(ns, name, (s) => isSettled(s) && s.pods.every((p) => p.spec.containers[0]?.image === image('v4')), {
      timeoutMs: 180_000,
      what: `App ${name} converged after the storm`,
    });
    const convergedMs = Date.now() - started;
    await history.stop();

    // Every person's last write is in the final object.
    const app = await getApp(ns, name);
    for (const who of ['alice', 'bob']) expect(app.metadata.labels?.[`${LABEL}/${who}`]).toBe(`${who}6`);
    for (const who of ['carol', 'dave']) expect(app.metadata.annotations?.[`${LABEL}/note-${who}`]).toBe(`${who} note 6`);
    expect(app.spec.replicas).toBe(REPLICAS.at(-1));
    expect(app.spec.updateStrategy?.rollingUpdate).toMatchObject({ partition: PARTITIONS.at(-1), paused: PAUSED.at(-1), maxUnavailable: 4 });
    expect(app.spec.template.spec?.containers[0]?.image).toBe(image('v4'));
    // The App converged to it.
    expect(done.pods).toHaveLength(REPLICAS.at(-1) ?? 0);
    expect(done.pods.every((p) => revisionOf(p) === done.app.status?.updateRevision)).toBe(true);
    expect(done.app.status?.observedGeneration).toBe(app.metadata.generation);
    // Pods: never two live for one ordinal; never created twice for one ordinal at one revision.
    expect(ledger.overlaps).toEqual([]);
    const stable = Math.min(20, ...REPLICAS);
    expect(duplicateCreations(ledger.created, stable)).toEqual([]);
    // At most one creation per rollout (v2, v3, v4) for every ordinal no scale-down removed.
    const perOrdinal = [...ledger.created].filter(([o]) => o < stable).map(([, revs]) => revs.length);
    expect(Math.max(...perOrdinal)).toBeLessThanOrEqual(3);

    const conflicts = results.reduce((n, r) => n + r.conflicts, 0);
    const failures = logs.lines.slice(0).filter((l) => l.msg === 'reconcile failed');
    const workerConflicts = failures.filter((l) => (l['err'] as { code?: string } | undefined)?.code === 'Conflict').length;
    const creations = [...ledger.created.values()].reduce((n, r) => n + r.length, 0);
    const perClient = results.map((r) => `${r.name} ${r.writes}/${r.conflicts}`).join(', ');
    process.stdout.write(
      `edit storm (seed ${SEED}): ${results.reduce((n, r) => n + r.writes, 0)} writes by ${results.length} clients in ${stormMs} ms, ` +
        `409s ${conflicts} (writes/409s: ${perClient}); worker retries ${logs.count('reconcile failed') - failedBefore} ` +
        `(409 ${workerConflicts}); pods created ${creations} across ${ledger.created.size} ordinals (max ${Math.max(...perOrdinal)} per ordinal for 3 rollouts); converged ${convergedMs} ms after the rollout began\n`,
    );
    expect(conflicts, 'the storm provoked 409s').toBeGreaterThan(0);
  }, 300_000);
});
