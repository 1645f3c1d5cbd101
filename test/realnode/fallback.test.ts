/**
 * Update policies on the real kubelet: an env change cannot be applied in place, so InPlaceIfPossible
 * recreates the pods (new UIDs, the InPlaceFallback condition and Events naming the path), and InPlaceOnly
 * refuses it and leaves the running pods alone.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import { ConditionType, EventReason, Reason } from '../../src/api/keys.ts';
import { createApp, eventsOf, isSettled, patchApp, settled, uniqueName, until, useController, type Snapshot } from '../integration/app/harness.ts';
import { gateOf, isAnnotated } from '../integration/app/pod-history.ts';
import { deleteApp, httpGet, mainContainer, realTemplate, waitForAnswer } from './support.ts';

const ctl = useController('rn-fb');

const policy = (podUpdatePolicy: string): Partial<AppSpec> =>
  ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy } } }) as Partial<AppSpec>;
const done = (generation: number) => (s: Snapshot) =>
  s.app.metadata.generation === generation && isSettled(s) && s.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True');
const uids = (s: Snapshot): (string | undefined)[] => s.pods.map((p) => p.metadata.uid);
const podIP = (s: Snapshot): string => String(s.pods[0]?.status?.['podIP'] ?? '');
const withEnv = (value: string) => mainContainer('v2', { env: [{ name: 'MODE', value }] });

describe('update policies on a real node', () => {
  it('an env change: InPlaceIfPossible recreates the pod; InPlaceOnly refuses and keeps it', async () => {
    const name = uniqueName('rnfb');
    await createApp(ctl.ns, name, { replicas: 1, template: realTemplate(name, [mainContainer('v1')]), ...policy('InPlaceIfPossible') });
    const v1 = await settled(ctl.ns, name, undefined, 90_000);

    let fallback: string | undefined;
    await patchApp(ctl.ns, name, { template: realTemplate(name, [withEnv('a')]) });
    const recreated = await until(ctl.ns, name, done(2), {
      timeoutMs: 90_000,
      onEach: (s) => (fallback ??= s.app.status?.conditions?.find((c) => c.type === ConditionType.inPlaceFallback && c.status === 'True')?.message),
    });
    expect(uids(recreated)[0]).not.toBe(uids(v1)[0]);
    expect(recreated.pods[0]?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(fallback).toContain('/spec/containers/0/env');
    const events = await eventsOf(ctl.ns, name, EventReason.inPlaceFallback);
    expect(events.map((e) => e.related?.name)).toEqual([`${name}-0`]);
    await waitForAnswer(podIP(recreated), 'v2');

    await patchApp(ctl.ns, name, { ...policy('InPlaceOnly'), template: realTemplate(name, [withEnv('b')]) });
    const refused = await until(
      ctl.ns,
      name,
      (s) =>
        s.app.status?.observedGeneration === 3 &&
        s.app.status.conditions?.some((c) => c.type === ConditionType.inPlaceFallback && c.reason === Reason.inPlaceOnlyRefused) === true,
      { timeoutMs: 60_000, what: `App ${name} refusing` },
    );
    expect(uids(refused)).toEqual(uids(recreated));
    expect(refused.pods.every((p) => !isAnnotated(p) && gateOf(p)?.status === 'True')).toBe(true);
    expect(await httpGet(podIP(refused), 8080)).toBe('v2');
    expect((await eventsOf(ctl.ns, name, EventReason.inPlaceFallback)).filter((e) => e.action === 'Refuse')).toHaveLength(1);
    await deleteApp(ctl.ns, name);
  });
});
