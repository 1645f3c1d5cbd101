/**
 * An abort that would undo more than the rollout in progress is refused, on the sandbox with the real watcher
 * and worker. A partition stage moved the pods above the partition to v2; a rollout to v3 then moved them on.
 * Going back to the stable revision (v1, the pods below the partition) would also undo v2, which no one asked
 * for: `ebb rollout abort` says so and writes nothing; a request written by hand is not served either: ebb
 * pauses the rollout (its own pause), removes the request and says why in an Event and the Aborted condition.
 * Setting the template back to v2 (what `ebb rollout undo --to-revision` writes) then lifts that pause and takes
 * the pods back to v2, one revision.
 */
import { describe, expect, it } from 'vitest';
import { appRef } from '../../../src/api/group.ts';
import { ConditionType, EventReason } from '../../../src/api/keys.ts';
import { PauseCause, pausedByValue, RolloutAnnotation } from '../../../src/api/rollout-abort.ts';
import { PatchType } from '../../../src/kube/rest.ts';
import { isRunningAndReady } from '../../../src/workers/app/pods/predicates.ts';
import { ebb } from '../cli/cli.ts';
import { sandbox } from '../support.ts';
import { createApp, eventsOf, patchApp, revisionOf, settled, snapshot, type Snapshot, template, uniqueName, until, useController } from './harness.ts';

const ctl = useController('abort-refused');
const condition = (s: Snapshot, type: string) => s.app.status?.conditions?.find((c) => c.type === type);
/** Pods `ordinals` Ready at `revision`, none terminating. */
const at = (s: Snapshot, revision: string, ordinals: number[]): boolean =>
  ordinals.every((o) => {
    const pod = s.pods.find((p) => p.metadata.name === `${s.app.metadata.name}-${o}`);
    return pod !== undefined && !pod.metadata.deletionTimestamp && isRunningAndReady(pod) && revisionOf(pod) === revision;
  });
const updateOf = (s: Snapshot): string => s.app.status?.updateRevision ?? '';
const rollingUpdate = (s: Snapshot) => s.app.spec.updateStrategy?.rollingUpdate;
const annotation = (s: Snapshot, key: string) => s.app.metadata.annotations?.[key];
const requestAbort = (name: string, revision: string) =>
  sandbox().rest.patch(appRef(ctl.ns, name), { metadata: { annotations: { [RolloutAnnotation.abort]: revision } } }, PatchType.merge);

describe('an abort past a revision made since the stable one', () => {
  it('is refused and pauses the rollout; undo to that revision goes back one step', async () => {
    const name = uniqueName('refuse');
    await createApp(ctl.ns, name, { replicas: 3, podManagementPolicy: 'Parallel', template: template(name, 'v1') });
    const v1 = updateOf(await settled(ctl.ns, name, undefined, 90_000));

    // A partition stage: pods 1 and 2 at v2, pod 0 stays at v1 (the stable revision).
    await patchApp(ctl.ns, name, { template: template(name, 'v2'), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } });
    const staged = await until(ctl.ns, name, (s) => updateOf(s) !== v1 && at(s, updateOf(s), [1, 2]) && at(s, v1, [0]), {
      what: 'pods 1 and 2 at v2',
    });
    const v2 = updateOf(staged);

    // The next rollout, v3, moves the same pods on.
    await patchApp(ctl.ns, name, { template: template(name, 'v3') });
    const moved = await until(ctl.ns, name, (s) => updateOf(s) !== v2 && at(s, updateOf(s), [1, 2]), {
      what: 'pods 1 and 2 at v3',
    });
    const v3 = updateOf(moved);
    expect(moved.app.status?.currentRevision).toBe(v1);

    // `ebb rollout abort` tells at once and writes nothing.
    const told = await ebb(['rollout', 'abort', `app/${name}`, '-n', ctl.ns]);
    expect(told.code).toBe(1);
    expect(told.stdout + told.stderr).toContain(`not aborted: going back to the stable revision ${v1}`);
    expect(annotation(await snapshot(ctl.ns, name), RolloutAnnotation.abort)).toBeUndefined();

    // The request written by hand (kubectl annotate) is refused by the worker.
    await requestAbort(name, v3);
    const refused = await until(
      ctl.ns,
      name,
      (s) => annotation(s, RolloutAnnotation.abort) === undefined && condition(s, ConditionType.aborted)?.reason === EventReason.abortRefused,
      { what: 'the abort refused' },
    );
    expect(refused.app.status?.abort).toBeUndefined();
    expect(condition(refused, ConditionType.aborted)?.status).toBe('False');
    expect(condition(refused, ConditionType.aborted)?.message).toContain(v2);
    expect(rollingUpdate(refused)?.paused).toBe(true);
    expect(annotation(refused, RolloutAnnotation.pausedBy)).toBe(pausedByValue(PauseCause.abortRefused, v3));
    const events = await eventsOf(ctl.ns, name, EventReason.abortRefused);
    expect(events.map((e) => e.note).join('\n')).toContain('ebb rollout undo --to-revision');
    // Nothing went back: pods 1 and 2 still run v3, pod 0 v1.
    expect(at(refused, v3, [1, 2]) && at(refused, v1, [0])).toBe(true);

    // The person chooses: back to v2 (the template set back, as `ebb rollout undo --to-revision` writes it).
    await patchApp(ctl.ns, name, { template: template(name, 'v2') });
    const undone = await until(ctl.ns, name, (s) => updateOf(s) === v2 && at(s, v2, [1, 2]) && at(s, v1, [0]), {
      what: 'pods 1 and 2 back at v2, the pause for v3 lifted',
    });
    expect(rollingUpdate(undone)?.paused).toBe(false);
    expect(annotation(undone, RolloutAnnotation.pausedBy)).toBeUndefined();
  });
});
