import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeError } from '../../../kube/errors.ts';
import type { PersistentVolumeClaim, Pod } from '../../../kube/types.ts';
import type { Replacement } from '../model/actions.ts';
import { AdmissionVerdicts, findRefusals, verdictKey, vouchByPods } from './dry-run.ts';
import type { DryRunCreator } from '../model/client.ts';
import { makeApp, podFor } from '../../../../test/unit/app/fixtures.ts';

const log = pino({ level: 'silent' });
const app = makeApp('web');

const replacement = (revision: string, claims: string[] = []): Replacement => ({
  revision,
  pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-2', namespace: 'ns' }, spec: { containers: [{ name: 'main', image: 'x' }] } },
  claims: claims.map((storage) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-web-2', namespace: 'ns' },
    spec: { resources: { requests: { storage } } },
  })),
});

/** A DryRunCreator that records what it was sent and answers with `answer`. */
function recorder(answer: (obj: Pod | PersistentVolumeClaim) => Error | undefined = () => undefined) {
  const sent: (Pod | PersistentVolumeClaim)[] = [];
  const respond = (obj: Pod | PersistentVolumeClaim): Promise<void> => {
    sent.push(obj);
    const err = answer(obj);
    return err ? Promise.reject(err) : Promise.resolve();
  };
  const dryRun: DryRunCreator = { pod: (_ns, pod) => respond(pod), claim: (_ns, claim) => respond(claim) };
  return { dryRun, sent };
}

describe('findRefusals', () => {
  it('sends the replacement under a generated name and remembers an accepted revision', async () => {
    const { dryRun, sent } = recorder();
    const verdicts = new AdmissionVerdicts();
    expect(await findRefusals(dryRun, app, [replacement('web-a', ['1Gi'])], verdicts, log)).toBeUndefined();
    expect(sent.map((o) => [o.kind, o.metadata?.name, o.metadata?.generateName])).toEqual([
      ['Pod', undefined, 'web-2-'],
      ['PersistentVolumeClaim', undefined, 'data-web-2-'],
    ]);
    await findRefusals(dryRun, app, [replacement('web-a', ['1Gi'])], verdicts, log);
    expect(sent).toHaveLength(2);
    // Other claim templates are another verdict: claims are not part of a revision.
    await findRefusals(dryRun, app, [replacement('web-a', ['2Gi'])], verdicts, log);
    expect(sent).toHaveLength(4);
  });

  it('returns permanent refusals with the apiserver message, and asks again next time', async () => {
    const invalid = new KubeError('Invalid', 422, 'POST pods: x', 'Invalid', 'Pod "web-2-abc" is invalid: spec.containers[0].image: Required value');
    const { dryRun, sent } = recorder(() => invalid);
    const verdicts = new AdmissionVerdicts();
    const refused = await findRefusals(dryRun, app, [replacement('web-a')], verdicts, log);
    expect(refused?.get('web-a')).toEqual({ code: 'Invalid', message: 'Pod "web-2-abc" is invalid: spec.containers[0].image: Required value' });
    await findRefusals(dryRun, app, [replacement('web-a')], verdicts, log);
    expect(sent).toHaveLength(2);
  });

  it('accepts a quota refusal and throws what heals with time', async () => {
    const quota = new KubeError('QuotaExceeded', 403, 'POST pods: exceeded quota: q');
    expect(await findRefusals(recorder(() => quota).dryRun, app, [replacement('web-a')], new AdmissionVerdicts(), log)).toBeUndefined();
    const down = new KubeError('ServerError', 500, 'POST pods: failed calling webhook');
    await expect(findRefusals(recorder(() => down).dryRun, app, [replacement('web-a')], new AdmissionVerdicts(), log)).rejects.toBe(down);
  });
});

describe('vouchByPods', () => {
  const NOW = Date.parse('2025-01-01T00:10:00Z');
  const created = (pod: ReturnType<typeof podFor>, at: string) => ({ ...pod, metadata: { ...pod.metadata, creationTimestamp: at } });

  it('skips the dry run of a revision a live pod of the App was created at within the TTL', async () => {
    const { dryRun, sent } = recorder();
    const verdicts = new AdmissionVerdicts(() => NOW);
    const pods = [created(podFor(app, 2, 'web-a'), '2025-01-01T00:09:00Z'), created(podFor(app, 1, 'web-old'), '2025-01-01T00:00:00Z')];
    vouchByPods(verdicts, app, pods, [replacement('web-a'), replacement('web-b')]);
    expect(await findRefusals(dryRun, app, [replacement('web-a')], verdicts, log)).toBeUndefined();
    expect(sent).toHaveLength(0);
    // Another revision has no pod to vouch for it.
    await findRefusals(dryRun, app, [replacement('web-b')], verdicts, log);
    expect(sent).toHaveLength(1);
  });

  it('does not vouch by a pod too old, terminating, of another controller, or for a replacement creating claims', () => {
    const verdicts = new AdmissionVerdicts(() => NOW, 5 * 60_000);
    const old = created(podFor(app, 2, 'web-a'), '2025-01-01T00:04:59Z');
    const terminating = created(podFor(app, 2, 'web-b', 'terminating'), '2025-01-01T00:09:00Z');
    const other = created(podFor(makeApp('web', {}, { uid: 'other' }), 2, 'web-c'), '2025-01-01T00:09:00Z');
    const fresh = created(podFor(app, 1, 'web-d'), '2025-01-01T00:09:00Z');
    vouchByPods(
      verdicts,
      app,
      [old, terminating, other, fresh],
      [replacement('web-a'), replacement('web-b'), replacement('web-c'), replacement('web-d', ['1Gi'])],
    );
    for (const r of ['web-a', 'web-b', 'web-c']) expect(verdicts.isAccepted(verdictKey(app, replacement(r)))).toBe(false);
    expect(verdicts.isAccepted(verdictKey(app, replacement('web-d', ['1Gi'])))).toBe(false);
    vouchByPods(verdicts, app, [fresh], [replacement('web-d')]);
    expect(verdicts.isAccepted(verdictKey(app, replacement('web-d')))).toBe(true);
  });
});

describe('AdmissionVerdicts', () => {
  it('counts the TTL from the time given, and never moves a verdict back in time', () => {
    let now = 10_000;
    const verdicts = new AdmissionVerdicts(() => now, 1_000);
    verdicts.remember('old', 8_999);
    expect(verdicts.isAccepted('old')).toBe(false);
    verdicts.remember('a', 9_500);
    verdicts.remember('a', 9_100);
    now = 10_499;
    expect(verdicts.isAccepted('a')).toBe(true);
    now = 10_500;
    expect(verdicts.isAccepted('a')).toBe(false);
  });

  it('forgets a verdict after its time to live, and the oldest beyond its size', () => {
    let now = 0;
    const verdicts = new AdmissionVerdicts(() => now, 1_000, 2);
    verdicts.remember('a');
    now = 999;
    expect(verdicts.isAccepted('a')).toBe(true);
    now = 1_000;
    expect(verdicts.isAccepted('a')).toBe(false);
    verdicts.remember('b');
    verdicts.remember('c');
    verdicts.remember('d');
    expect([verdicts.isAccepted('b'), verdicts.isAccepted('c'), verdicts.isAccepted('d')]).toEqual([false, true, true]);
  });

  it('keys by App UID, revision and claim templates', () => {
    expect(verdictKey(app, replacement('web-a'))).not.toBe(verdictKey(app, replacement('web-b')));
    expect(verdictKey(app, replacement('web-a'))).not.toBe(verdictKey(makeApp('web', {}, { uid: 'other' }), replacement('web-a')));
  });
});
