/**
 * Abort and rollback on the sandbox, with the real watcher and worker and the CLI run as a user runs it:
 * - a canary paused at its step is aborted by `ebb rollout abort`: its pods go back to the stable revision,
 *   no pod of the stable revision is ever deleted, spec.template is unchanged; `rollout status` and `history`
 *   say aborted; `ebb rollout retry` starts the steps again, and `kubectl ebb rollout promote` skips the rest;
 * - rollbackOnProgressDeadline aborts a rollout stuck on an image that crash-loops, and rolls it back.
 *
 * The sandbox's kubelet crash-loops images whose repository starts with `crashloop`; a startup and a readiness
 * probe keep such a container from ever being Ready.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import { AbortReason } from '../../../src/api/rollout-abort.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { cliEnv, ebb, KUBECTL, pluginDir, run } from '../cli/cli.ts';
import { LONG_SCENARIO_MS, rejection } from '../support.ts';
import { createApp, eventsOf, getApp, image, patchApp, revisionOf, settled, type Snapshot, template, uniqueName, until, useController } from './harness.ts';

const ctl = useController('abort');
const CRASHING = 'registry.example.com/team/crashloop:v2';
const steps = [{ replicas: 2 }, { pause: {} }, { replicas: '100%' }];
const probe = { exec: { command: ['true'] }, periodSeconds: 1 };

const condition = (s: Snapshot, type: string) => s.app.status?.conditions?.find((c) => c.type === type);

/** Every pod at `revision`, Ready, none terminating, and status says the abort is complete. */
const rolledBack = (s: Snapshot, revision: string): boolean =>
  s.pods.length === (s.app.spec.replicas ?? 1) &&
  s.pods.every((p) => !p.metadata.deletionTimestamp && isRunningAndReady(p) && revisionOf(p) === revision) &&
  condition(s, ConditionType.progressing)?.reason === Reason.rolloutAborted;

/** Once armed with the stable revision's pods, watches every snapshot for one of them being deleted; `deleted` names them. */
function stableWatch(): { arm: (s: Snapshot, stable: string) => void; onEach: (s: Snapshot) => void; deleted: Set<string> } {
  const deleted = new Set<string>();
  const armed = new Set<string>();
  return {
    deleted,
    arm: (s, stable) => s.pods.filter((p) => revisionOf(p) === stable).forEach((p) => armed.add(p.metadata.uid ?? '')),
    onEach: (s) => {
      for (const p of s.pods)
        if (p.metadata.deletionTimestamp && armed.has(p.metadata.uid ?? '')) deleted.add(`${p.metadata.name ?? ''}/${p.metadata.uid ?? ''}`);
      // A pod of the stable revision that disappeared between two snapshots was deleted too.
      for (const uid of armed) if (!s.pods.some((p) => p.metadata.uid === uid)) deleted.add(uid);
    },
  };
}

describe.each(['ReCreate', 'InPlaceIfPossible'] as const)('abort (%s)', (podUpdatePolicy) => {
  // Four rollouts and five CLI processes in one story: a bound for the whole story, not for one wait.
  it(
    'ebb rollout abort sends a paused canary back to stable; retry starts again; kubectl ebb promote completes it',
    { timeout: LONG_SCENARIO_MS },
    async () => {
      const name = uniqueName('ab');
      const cli = (op: string) => ebb(['rollout', op, `app/${name}`, '-n', ctl.ns]);
      await createApp(ctl.ns, name, {
        replicas: 4,
        podManagementPolicy: 'Parallel',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy, canary: { steps } } },
      });
      const initial = await settled(ctl.ns, name);
      const stable = initial.app.status?.updateRevision ?? '';
      const stableUids = new Set(initial.pods.map((p) => p.metadata.uid));
      const watch = stableWatch();

      await patchApp(ctl.ns, name, { template: template(name, 'v2') });
      const paused = await until(
        ctl.ns,
        name,
        (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.step === 1 && s.pods.filter(isRunningAndReady).length === 4,
      );
      const next = paused.app.status?.updateRevision ?? '';
      // From here on, no pod of the stable revision may be deleted: not by the abort, the retry or the promote's first steps.
      watch.arm(paused, stable);
      expect(paused.pods.map(revisionOf)).toEqual([stable, stable, next, next]);
      const kept = paused.pods.filter((p) => revisionOf(p) === stable).map((p) => p.metadata.uid);
      expect(kept.every((uid) => stableUids.has(uid))).toBe(true);

      const abort = await cli('abort');
      expect(abort.code, abort.stderr).toBe(0);
      expect(abort.stdout).toContain(`rollout of revision ${next} aborted: pods go back to revision ${stable}`);
      const back = await until(ctl.ns, name, (s) => rolledBack(s, stable), { onEach: watch.onEach, what: `App ${name} rolled back` });
      expect(watch.deleted).toEqual(new Set());
      // In place, the canary pods themselves went back: same pods (UIDs), the stable image.
      if (podUpdatePolicy === 'InPlaceIfPossible') expect(back.pods.map((p) => p.metadata.uid)).toEqual(paused.pods.map((p) => p.metadata.uid));
      expect(back.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v1'))).toBe(true);
      expect(kept.every((uid) => back.pods.some((p) => p.metadata.uid === uid))).toBe(true);
      expect(back.app.spec.template).toEqual(paused.app.spec.template);
      expect(back.app.spec.updateStrategy?.rollingUpdate?.paused).toBe(false);
      expect(back.app.status).toMatchObject({
        currentRevision: stable,
        updateRevision: next,
        updatedReplicas: 0,
        abort: { revision: next, reason: AbortReason.requested },
      });
      expect(condition(back, ConditionType.aborted)).toMatchObject({ status: 'True', reason: AbortReason.requested });
      expect(await eventsOf(ctl.ns, name, EventReason.rolloutAborted)).toHaveLength(1);

      const status = await ebb(['rollout', 'status', `app/${name}`, '-n', ctl.ns, '--watch=false']);
      expect(status.code).toBe(5);
      expect(status.stdout).toContain(`app "${name}" rollout aborted`);
      const history = await cli('history');
      expect(history.stdout).toMatch(new RegExp(`${next}\\s+aborted \\(AbortRequested\\)`));

      const retry = await cli('retry');
      expect(retry.code, retry.stderr).toBe(0);
      const again = await until(
        ctl.ns,
        name,
        (s) => s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.step === 1 && s.pods.filter(isRunningAndReady).length === 4,
        { onEach: watch.onEach },
      );
      expect(again.app.status?.abort).toBeUndefined();
      expect(condition(again, ConditionType.aborted)).toMatchObject({ status: 'False', reason: Reason.abortRetried });
      expect(again.pods.map(revisionOf)).toEqual([stable, stable, next, next]);

      const promote = await run(KUBECTL, ['ebb', 'rollout', 'promote', `app/${name}`, '-n', ctl.ns], cliEnv(await pluginDir()));
      expect(promote.code, promote.stderr).toBe(0);
      expect(promote.stdout).toContain("canary steps 2 to 3 skipped; ebb's pause lifted (CanaryStep)");
      const done = await settled(ctl.ns, name, next, 90_000);
      expect(done.app.status?.canary).toEqual({ step: 3 });
      expect(await eventsOf(ctl.ns, name, EventReason.rolloutPromoted)).toHaveLength(1);
      expect(done.app.spec.template).toEqual(paused.app.spec.template);
    },
  );

  it('rollbackOnProgressDeadline aborts a rollout stuck on a crash-looping image and rolls it back', async () => {
    const name = uniqueName('dl');
    const probed = (ref: string): AppSpec['template'] => ({
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: ref, startupProbe: probe, readinessProbe: probe }], terminationGracePeriodSeconds: 1 },
    });
    await createApp(ctl.ns, name, {
      replicas: 3,
      template: probed(image('v1')),
      progressDeadlineSeconds: 8,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy, rollbackOnProgressDeadline: true } },
    });
    const stable = (await settled(ctl.ns, name, undefined, 90_000)).app.status?.updateRevision ?? '';
    const watch = stableWatch();
    await patchApp(ctl.ns, name, { template: probed(CRASHING) });
    // The highest pod goes to the bad revision and crash-loops; the others stay at the stable one from then on.
    const stuck = await until(ctl.ns, name, (s) => s.pods.some((p) => p.spec?.['containers']?.[0]?.image === CRASHING), { timeoutMs: 60_000 });
    watch.arm(stuck, stable);
    const aborted = await until(ctl.ns, name, (s) => s.app.status?.abort !== undefined, {
      onEach: watch.onEach,
      timeoutMs: 90_000,
      what: `App ${name} aborted`,
    });
    const bad = aborted.app.status?.updateRevision ?? '';
    expect(bad).not.toBe(stable);
    expect(aborted.app.status?.abort).toMatchObject({ revision: bad, reason: AbortReason.progressDeadline });
    const back = await until(ctl.ns, name, (s) => rolledBack(s, stable), { onEach: watch.onEach, timeoutMs: 90_000, what: `App ${name} rolled back` });
    // Only the highest pod was updated (maxUnavailable 1, OrderedReady); no pod of the stable revision went.
    expect(stuck.pods.filter((p) => revisionOf(p) === stable)).toHaveLength(2);
    expect(watch.deleted).toEqual(new Set());
    expect(back.pods.every((p) => p.spec?.['containers']?.[0]?.image === image('v1'))).toBe(true);
    expect((await getApp(ctl.ns, name)).spec.template.spec?.containers[0]?.image).toBe(CRASHING);
    expect(await eventsOf(ctl.ns, name, EventReason.progressDeadlineExceeded)).toHaveLength(1);
    expect(await eventsOf(ctl.ns, name, EventReason.rolloutAborted)).toHaveLength(1);
  });
});

describe('rollbackOnProgressDeadline at admission', () => {
  it('is refused without a progress deadline', async () => {
    const create = createApp(ctl.ns, uniqueName('bad'), { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollbackOnProgressDeadline: true } } });
    const err = await rejection(create);
    expect(err.status).toBe(422);
    expect(err.message).toContain('rollbackOnProgressDeadline requires spec.progressDeadlineSeconds');
  });
});
