import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeError } from '../../../kube/errors.ts';
import type { PersistentVolumeClaim, Pod } from '../../../kube/types.ts';
import type { Replacement } from '../actions.ts';
import { AdmissionVerdicts, findRefusals, verdictKey } from './dry-run.ts';
import type { DryRunCreator } from '../client.ts';
import { makeApp } from '../../../../test/unit/app/fixtures.ts';

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

describe('AdmissionVerdicts', () => {
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
