/**
 * The tenant quota of deploy/samples/tenant-quota.yaml on the sandbox apiserver: every key it sets is one the
 * quota system counts (the controller reports each in status.hard and status.used), and a full namespace refuses
 * the next App with the quota's name, so an installer's quota bounds how many Apps a tenant makes ebb reconcile.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { bareApp } from '../app-body.ts';
import { freshNamespace, rejection, sandbox } from '../support.ts';

interface Quota {
  metadata: { name: string; namespace?: string };
  spec: { hard: Record<string, string> };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

const WAIT = { timeoutMs: 60_000, intervalMs: 250 };
const APPS = 'count/apps.apps.ebb.dev';

describe('the sample tenant quota', () => {
  const { rest } = sandbox();
  const signal = AbortSignal.timeout(220_000);
  const sample = parse(readFileSync(join(PROJECT_ROOT, 'deploy', 'samples', 'tenant-quota.yaml'), 'utf8')) as Quota;
  let ns = '';
  const quota = (): Promise<Quota> => rest.get<Quota>(core('resourcequotas', ns, sample.metadata.name));

  // A quota is counted when it is added or its limits change. The quota controller learns new resources (the
  // sandbox's CRDs) by discovery every 30 s and does not recount existing quotas when it does, so a quota made
  // before that may wait for the 5-minute resync: it is made again until every key it sets is counted.
  const countedQuota = async (hard: Record<string, string>): Promise<Quota> => {
    const body = { ...sample, metadata: { name: sample.metadata.name }, spec: { hard } };
    const all = (q: Quota): boolean => Object.keys(hard).every((k) => q.status?.used?.[k] !== undefined);
    return waitFor(
      async () => {
        await rest.create(core('resourcequotas', ns), body);
        const q = await waitFor(
          async () => {
            const seen = await quota();
            return all(seen) ? seen : undefined;
          },
          { timeoutMs: 10_000, intervalMs: 250, signal, what: 'the quota counted' },
        ).catch(() => undefined);
        if (!q) await rest.delete(core('resourcequotas', ns, sample.metadata.name));
        return q;
      },
      { timeoutMs: 120_000, intervalMs: 1_000, signal, what: 'the quota counted' },
    );
  };

  beforeAll(async () => {
    ns = await freshNamespace('quota');
  });
  afterAll(async () => {
    if (ns) await rest.delete(core('namespaces', undefined, ns)).catch(() => undefined);
  });

  it('counts every key it sets, and refuses an App over the count', async () => {
    expect(Object.keys(sample.spec.hard)).toEqual(expect.arrayContaining([APPS, 'count/imagepulljobs.apps.ebb.dev', 'count/controllerrevisions.apps', 'pods']));
    // The sample's keys, with room for one App. The count is lowered before any App exists: the quota controller
    // recomputes usage from its own informer whenever the hard limits change, and an informer that has not yet seen
    // a new App would write a usage of 0 that nothing corrects until the next full resync.
    const hard = { ...sample.spec.hard, [APPS]: '1' };
    const counted = await countedQuota(hard);
    expect(counted.status?.hard).toEqual(hard);
    expect(counted.status?.used?.[APPS]).toBe('0');

    await rest.create(appRef(ns), bareApp('first', 'registry.example.com/app:1'));
    await waitFor(async () => ((await quota()).status?.used?.[APPS] === '1' ? true : undefined), { ...WAIT, signal, what: 'one App counted' });
    // The namespace is full at one App: the next is refused, naming the quota.
    const err = await rejection(rest.create(appRef(ns), bareApp('second', 'registry.example.com/app:1')));
    expect(err.status).toBe(403);
    expect(err.message).toContain(`exceeded quota: ${sample.metadata.name}`);
    expect(err.message).toContain(APPS);
  });
});
