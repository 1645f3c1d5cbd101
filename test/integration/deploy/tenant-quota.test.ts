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
import { API_VERSION, APP_KIND, appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType } from '../../../src/kube/rest.ts';
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
  const signal = AbortSignal.timeout(180_000);
  const sample = parse(readFileSync(join(PROJECT_ROOT, 'deploy', 'samples', 'tenant-quota.yaml'), 'utf8')) as Quota;
  let ns = '';
  const quota = (): Promise<Quota> => rest.get<Quota>(core('resourcequotas', ns, sample.metadata.name));
  const app = (name: string): unknown => ({
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'registry.example.com/app:1' }] } },
    },
  });

  beforeAll(async () => {
    ns = await freshNamespace('quota');
  });
  afterAll(async () => {
    if (ns) await rest.delete(core('namespaces', undefined, ns)).catch(() => undefined);
  });

  it('counts every key it sets, and refuses an App over the count', async () => {
    expect(Object.keys(sample.spec.hard)).toEqual(expect.arrayContaining([APPS, 'count/imagepulljobs.apps.ebb.dev', 'count/controllerrevisions.apps', 'pods']));
    await rest.create(core('resourcequotas', ns), { ...sample, metadata: { name: sample.metadata.name } });
    const counted = await waitFor(
      async () => {
        const q = await quota();
        return Object.keys(sample.spec.hard).every((k) => q.status?.used?.[k] !== undefined) ? q : undefined;
      },
      { ...WAIT, signal, what: 'the quota counted' },
    );
    expect(counted.status?.hard).toEqual(sample.spec.hard);

    await rest.create(appRef(ns), app('first'));
    await waitFor(async () => ((await quota()).status?.used?.[APPS] === '1' ? true : undefined), { ...WAIT, signal, what: 'one App counted' });
    // The namespace is full at one App: the next is refused, naming the quota.
    await rest.patch(core('resourcequotas', ns, sample.metadata.name), { spec: { hard: { [APPS]: '1' } } }, PatchType.merge);
    await waitFor(async () => ((await quota()).status?.hard?.[APPS] === '1' ? true : undefined), { ...WAIT, signal, what: 'the lower count in force' });
    const err = await rejection(rest.create(appRef(ns), app('second')));
    expect(err.status).toBe(403);
    expect(err.message).toContain(`exceeded quota: ${sample.metadata.name}`);
    expect(err.message).toContain(APPS);
  });
});
