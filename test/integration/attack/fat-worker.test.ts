/**
 * A tenant's App whose pods and revisions are more than a worker can hold cannot kill the worker. Namespace A
 * holds App `greedy` (small itself) with 250 pods of 250 KB annotations matching its selector and 100
 * ControllerRevisions of about 1.2 MB labelled as its own (an unbounded revisionHistoryLimit leaves as many).
 * The real `ebb worker`, under the heap flags of deploy/components/worker.yaml, refuses that read (a
 * ReadTooLarge Warning Event on the App), stays up, and keeps reconciling namespace B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/common/wait.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApps, deleteNamespace, editApp, printLogsOnFailure, uniquePrefix, waitAllObserved, type EbbProcess } from '../watcher/helpers.ts';
import { manifestMemoryLimitBytes, peakRssBytes } from './manifest.ts';
import { createFatPods, eventsWithReason, inParallel, SETUP_TIMEOUT_MS, spawnManifestWorker, startManifestWatcher } from './fat.ts';

const REVISIONS = 100;
const REVISION_BYTES = 1_200_000;

describe('an App with more pods and revisions than a worker reads', () => {
  let nsA = '';
  let nsB = '';
  const procs: EbbProcess[] = [];
  const prefix = uniquePrefix('fatw');

  beforeAll(async () => {
    const { rest } = sandbox();
    nsA = await freshNamespace('fatw-a');
    nsB = await freshNamespace('fatw-b');
    await createFatPods(nsA, 'greedy');
    const revisions = Array.from({ length: REVISIONS }, (_, i) => i + 1);
    await inParallel(revisions, 4, (i) =>
      rest.create(
        { group: 'apps', version: 'v1', resource: 'controllerrevisions', namespace: nsA },
        {
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: { name: `greedy-${i}`, labels: { app: 'greedy' } },
          revision: i,
          data: { pad: 'r'.repeat(REVISION_BYTES) },
        },
      ),
    );
    // The App last: its first reconcile meets every pod and revision.
    await createApps(rest, nsA, ['greedy']);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await deleteNamespace(sandbox().rest, nsA);
    await deleteNamespace(sandbox().rest, nsB);
  });

  it('refuses the read with an Event, stays up, and keeps reconciling another namespace', async () => {
    const { rest } = sandbox();
    printLogsOnFailure(procs);
    const worker = await spawnManifestWorker(prefix, [nsA, nsB]);
    procs.push(worker);
    await startManifestWatcher('watcher', prefix, [nsA, nsB], procs);

    await waitFor(async () => ((await eventsWithReason(nsA, 'ReadTooLarge')).includes('greedy') ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: 'a ReadTooLarge Event on App greedy',
    });

    await createApps(rest, nsB, ['victim']);
    await waitAllObserved(rest, nsB, 1, 120_000);
    const generation = await editApp(rest, nsB, 'victim');
    const [victim] = await waitAllObserved(rest, nsB, 1, 120_000);
    expect(victim?.observedGeneration).toBe(generation);

    expect(worker.running(), 'the worker is still up').toBe(true);
    // No cgroup here: the manifest's limit is where the kernel would have killed it.
    expect(await peakRssBytes(worker.pid), 'peak RSS within the manifest memory limit').toBeLessThan(await manifestMemoryLimitBytes('worker'));
    for (const p of procs) expect(p.stderr(), `${p.name} stderr`).not.toContain('heap limit');
  });
});
