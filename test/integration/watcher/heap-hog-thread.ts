/**
 * A worker thread entry for worker-thread.test.ts, never shipped: the shipped thread's worker (`runWorkerThread`),
 * except that the reconcile of an App named `hog-*` allocates until the thread's heap limit ends the thread, as
 * a reconcile of a huge App or analysis answer would.
 */
import { runWorkerThread } from '../../../src/workers/thread.ts';
import type { Reconciler } from '../../../src/workers/types.ts';

const hog = (app: Reconciler): Reconciler => {
  return async (key, ctx) => {
    if (key.name.startsWith('hog-')) {
      const kept: string[][] = [];
      for (;;) kept.push(new Array<string>(100_000).fill(key.name));
    }
    return app(key, ctx);
  };
};

await runWorkerThread((set) => ({ ...set, byKind: { ...set.byKind, App: hog(set.byKind.App) } }));
