/**
 * The per-namespace cap with the real worker: with EBB_NAMESPACE_CONCURRENCY=1 and eight reconciles allowed at
 * once, Apps created together in one namespace all settle (jobs over the cap go back to the delayed set without
 * spending an attempt, so none fails). The cap itself is tested on a real Redis in test/unit/queue.
 */
import { describe, expect, it } from 'vitest';
import { createApp, settled, template, uniqueName, useController } from './harness.ts';

const ctl = useController('app-nscap', { env: { EBB_NAMESPACE_CONCURRENCY: '1', EBB_WORKER_CONCURRENCY: '8' } });

describe('the namespace cap', () => {
  it('lets every App of a namespace settle under a cap of one', async () => {
    const names = Array.from({ length: 12 }, () => uniqueName('cap'));
    await Promise.all(names.map((name) => createApp(ctl.ns, name, { replicas: 1, template: template(name, 'v1') })));
    // One reconcile at a time for the whole namespace, with a 0.5–1 s wait for each job put back: slower than
    // usual on a loaded machine, so a longer bound than the harness's default.
    const all = await Promise.all(names.map((name) => settled(ctl.ns, name, undefined, 150_000)));
    for (const s of all) expect(s.pods).toHaveLength(1);
  }, 170_000);
});
