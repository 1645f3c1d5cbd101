/**
 * An AppClient that reads the App and its pods from the view when the freshness rule allows (`judge`), waits
 * briefly for a view behind ebb's own writes, and reads fresh otherwise. Its writes go to the apiserver as
 * before, each with its precondition (a uid on deletes, a resourceVersion where the plan sets one), and
 * record the resourceVersion they produced next to the view. A write the apiserver refuses as stale
 * (Conflict, AlreadyExists, NotFound) sends the App's next read fresh.
 */
import type { App } from '../api/app.ts';
import { Label } from '../api/keys.ts';
import { sleep } from '../common/wait.ts';
import { isKubeError } from '../kube/errors.ts';
import type { Pod, Stored } from '../kube/types.ts';
import { podOwnerKey } from '../watcher/keys.ts';
import type { AppClient } from '../workers/app/model/client.ts';
import { selectorMatches, selectorString } from '../workers/app/pods/selector.ts';
import { judge, type FreshReason } from './freshness.ts';
import { Field } from './keys.ts';
import type { ViewStore } from './store.ts';

export interface ViewOptions {
  store: ViewStore;
  signal: AbortSignal;
  now: () => number;
  /** How long a worker's fresh list of an App's pods vouches for the view (pods the watcher does not see). */
  checkPeriodMs: number;
  /** How long a read waits for a view behind ebb's own writes, and how often it looks again. */
  waitMs: number;
  pollMs: number;
  /** Told where each App read came from. */
  onRead?: (from: 'view' | 'fresh', reason?: FreshReason | 'behind') => void;
}

/**
 * A fresh list of an App's pods vouches for the view 10 minutes (a pod the watcher cannot see, appearing meanwhile,
 * is found within that, as today's periodic resync would find it); a view behind ebb's writes is waited for 1 s.
 */
export const VIEW_READS = { checkPeriodMs: 10 * 60_000, waitMs: 1000, pollMs: 25 } as const;

type Read = { namespace: string; name: string } & ({ view: true; app: Stored<App>; pods: Stored<Pod>[] } | { view: false });

/** Whether a fresh list holds a pod the watcher does not map to App `name` (no App label, or another App's). */
export function holdsUnwatched(name: string, pods: readonly Stored<Pod>[]): boolean {
  return pods.some((p) => p.metadata.labels?.[Label.app] === undefined || podOwnerKey(p)?.name !== name);
}

export function viewedAppClient(inner: AppClient, o: ViewOptions): AppClient {
  let last: Read | undefined;
  const tell = (from: 'view' | 'fresh', reason?: FreshReason | 'behind'): void => o.onRead?.(from, reason);

  async function getApp(namespace: string, name: string): Promise<Stored<App> | undefined> {
    const deadline = o.now() + o.waitMs;
    for (;;) {
      const v = judge(await o.store.read(namespace, name), namespace, o.now(), o.checkPeriodMs);
      if (v.use) {
        last = { namespace, name, view: true, app: v.app, pods: v.pods };
        tell('view');
        return v.app;
      }
      if (v.why === 'wait' && o.now() < deadline) {
        await sleep(o.pollMs, o.signal);
        continue;
      }
      last = { namespace, name, view: false };
      tell('fresh', v.why === 'wait' ? 'behind' : v.reason);
      return inner.apps.get(namespace, name);
    }
  }

  /** The App whose view holds `pod` (the watcher's mapping), for the records of ebb's writes to it. */
  const appOfPod = (pod: Stored<Pod>): string | undefined => podOwnerKey(pod)?.name;

  async function recorded<T>(write: Promise<T>, namespace: string, app: string | undefined, record: (r: T) => [string, string] | undefined): Promise<T> {
    try {
      const r = await write;
      const rec = record(r);
      if (app && rec) await o.store.record(namespace, app, rec[0], rec[1]);
      return r;
    } catch (err) {
      // A stale view may have planned this write: the next read of the App is fresh (and re-checks its pods).
      if (isKubeError(err, 'Conflict', 'AlreadyExists', 'NotFound') && last)
        await o.store.record(last.namespace, last.name, Field.checked, '0 1').catch(() => undefined);
      throw err;
    }
  }

  const rvOf = (x: unknown): string | undefined => (x as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion;

  return {
    ...inner,
    apps: {
      get: getApp,
      patch: (ns, name, patch) => recorded(inner.apps.patch(ns, name, patch), ns, name, (a) => [Field.wroteApp, a.metadata.resourceVersion]),
      patchStatus: (ns, name, patch) => recorded(inner.apps.patchStatus(ns, name, patch), ns, name, (a) => [Field.wroteApp, a.metadata.resourceVersion]),
    },
    pods: {
      ...inner.pods,
      list: async (ns, selector) => {
        const read = last;
        if (read?.view && read.namespace === ns && selectorString(read.app.spec.selector) === selector) {
          return read.pods.filter((p) => selectorMatches(read.app.spec.selector, p.metadata.labels));
        }
        const pods = await inner.pods.list(ns, selector);
        if (read && !read.view && read.namespace === ns) {
          await o.store.record(ns, read.name, Field.checked, `${o.now()} ${holdsUnwatched(read.name, pods) ? 1 : 0}`).catch(() => undefined);
        }
        return pods;
      },
      create: async (ns, pod) => {
        const made = await recorded(inner.pods.create(ns, pod), ns, undefined, () => undefined);
        const app = appOfPod(made);
        if (app) await o.store.record(ns, app, Field.wrotePod(made.metadata.name), made.metadata.resourceVersion);
        return made;
      },
      patch: async (ns, name, patch) => {
        const p = await recorded(inner.pods.patch(ns, name, patch), ns, undefined, () => undefined);
        const app = appOfPod(p);
        if (app) await o.store.record(ns, app, Field.wrotePod(name), p.metadata.resourceVersion);
        return p;
      },
      delete: async (ns, name, uid) => {
        await recorded(inner.pods.delete(ns, name, uid), ns, last?.name, () => (uid ? [Field.deletedPod(name), uid] : undefined));
      },
    },
    podPatches: {
      patch: async <T>(...args: Parameters<AppClient['podPatches']['patch']>): Promise<T> => {
        const [ref] = args;
        const r = await recorded(inner.podPatches.patch<T>(...args), ref.namespace ?? '', undefined, () => undefined);
        const app = ref.resource === 'pods' && ref.name ? podOwnerKey(r as Stored<Pod>)?.name : undefined;
        const rv = rvOf(r);
        if (app && rv && ref.name) await o.store.record(ref.namespace ?? '', app, Field.wrotePod(ref.name), rv);
        return r;
      },
    },
  };
}
