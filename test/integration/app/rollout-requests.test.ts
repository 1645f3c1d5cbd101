/**
 * Requests (App annotations `ebb rollout promote | abort` write) act on the rollout they name only, on the
 * sandbox with the real watcher and worker and the CLI as a user runs it:
 * - promote, finish, revert, then apply the promoted template again: its canary steps run again;
 * - abort, move on to a new template, then apply the aborted template again: it rolls out, not aborted.
 * Each served request is removed from the App.
 */
import { describe, expect, it } from 'vitest';
import type { CanaryStep } from '../../../src/api/update-strategy.ts';
import { RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { ebb } from '../cli/cli.ts';
import { createApp, patchApp, revisionOf, settled, type Snapshot, template, uniqueName, until, useController } from './harness.ts';

const ctl = useController('requests');
const steps: CanaryStep[] = [{ replicas: 1 }, { pause: {} }, { replicas: '100%' }];
const requests = (s: Snapshot) =>
  Object.keys(s.app.metadata.annotations ?? {}).filter((k) =>
    ([RolloutAnnotation.promote, RolloutAnnotation.abort, RolloutAnnotation.retry] as string[]).includes(k),
  );
/** The canary holds at its pause step with one pod of the update revision, or (a request wrongly acting) the rollout finished. */
const pausedOrDone = (s: Snapshot) =>
  (s.app.spec.updateStrategy?.rollingUpdate?.paused === true && s.app.status?.canary?.step === 1 && s.pods.filter(isRunningAndReady).length === 3) ||
  (s.app.status?.abort !== undefined && s.app.status.updateRevision !== undefined) ||
  (s.app.status?.currentRevision === s.app.status?.updateRevision && s.app.status?.observedGeneration === s.app.metadata.generation);

/** An App of 3 (Parallel) with the canary `steps`, settled at its first revision, which it returns. */
async function canaryAppAtV1(name: string): Promise<string> {
  await createApp(ctl.ns, name, {
    replicas: 3,
    podManagementPolicy: 'Parallel',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { canary: { steps } } },
  });
  return (await settled(ctl.ns, name, undefined, 90_000)).app.status?.updateRevision ?? '';
}

describe('requests act on their own rollout only', () => {
  it('promote, finish, revert, apply the same template again: the steps run again', async () => {
    const name = uniqueName('rq-pr');
    const cli = (op: string) => ebb(['rollout', op, `app/${name}`, '-n', ctl.ns]);
    const v1 = await canaryAppAtV1(name);

    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const first = await until(ctl.ns, name, pausedOrDone, { what: 'the canary paused' });
    const v2 = first.app.status?.updateRevision ?? '';
    expect(first.app.status?.canary?.step).toBe(1);
    const promote = await cli('promote');
    expect(promote.code, promote.stderr).toBe(0);
    await settled(ctl.ns, name, v2, 90_000);

    // Revert, without canary steps, then apply the promoted template again with them.
    await patchApp(ctl.ns, name, { template: template(name, 'v1'), updateStrategy: { rollingUpdate: { canary: null } } });
    await settled(ctl.ns, name, v1, 90_000);
    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { rollingUpdate: { canary: { steps } } } });
    const again = await until(ctl.ns, name, (s) => s.app.status?.updateRevision === v2 && pausedOrDone(s), { what: 'the same template applied again' });
    expect(again.app.status?.currentRevision).toBe(v1);
    expect(again.app.status?.canary?.step).toBe(1);
    expect(again.pods.map(revisionOf)).toEqual([v1, v1, v2]);
    expect(requests(again)).toEqual([]);
  });

  it('abort, move on, apply the aborted template again: it rolls out', async () => {
    const name = uniqueName('rq-ab');
    const cli = (op: string) => ebb(['rollout', op, `app/${name}`, '-n', ctl.ns]);
    const v1 = await canaryAppAtV1(name);
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const v2 = (await until(ctl.ns, name, pausedOrDone, { what: 'the canary paused' })).app.status?.updateRevision ?? '';
    const abort = await cli('abort');
    expect(abort.code, abort.stderr).toBe(0);
    await until(ctl.ns, name, (s) => s.app.status?.abort?.revision === v2 && s.pods.every((p) => revisionOf(p) === v1 && isRunningAndReady(p)), {
      what: 'rolled back',
    });

    // A new template (without canary steps) ends the abort and rolls out.
    await patchApp(ctl.ns, name, { template: template(name, 'v3'), updateStrategy: { rollingUpdate: { paused: false, canary: null } } });
    const v3 = await until(ctl.ns, name, (s) => s.app.status?.observedGeneration === s.app.metadata.generation && s.app.status?.updateRevision !== v2, {
      what: 'the new template seen',
    });
    await settled(ctl.ns, name, v3.app.status?.updateRevision, 90_000);

    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { rollingUpdate: { canary: { steps } } } });
    const again = await until(ctl.ns, name, (s) => s.app.status?.updateRevision === v2 && pausedOrDone(s), { what: 'the aborted template applied again' });
    expect(again.app.status?.abort).toBeUndefined();
    expect(again.app.status?.canary?.step).toBe(1);
    expect(requests(again)).toEqual([]);
  });
});
