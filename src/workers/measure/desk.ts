/**
 * The reconcile's side of the measure queue: one MGET for the results of a plan's due measurements, and one
 * add per result not there yet, under the measurement's own id (BullMQ adds nothing when a job with that id
 * waits or runs). A result is read again by every plan until the status records it; once recorded, the run's
 * next due time gives the next measurement another id, so a result is judged once.
 */
import type { Measurement } from '../../api/analysis.ts';
import type { App } from '../../api/app.ts';
import type { Stored } from '../../kube/types.ts';
import type { MeasureJob } from '../../queue/measure-queue.ts';
import type { MeasureDesk, MeasureRequest } from '../app/model/analysis-io.ts';
import { measureJobId } from './identity.ts';
import type { ResultStore } from './store.ts';

/** What the desk needs of the measure queue. */
export interface MeasureAdder {
  addBulk(jobs: { name: string; data: MeasureJob; opts: { jobId: string } }[]): Promise<unknown>;
}

/** The measure jobs of a plan's due requests (a request without a due time has none yet: its run is recorded first). */
function dueJobs(app: Stored<App>, requests: readonly MeasureRequest[]): { key: string; id: string; data: MeasureJob }[] {
  return requests.flatMap((r): { key: string; id: string; data: MeasureJob }[] => {
    if (r.due === undefined) return [];
    const { namespace, name, uid } = app.metadata;
    const data: MeasureJob = { namespace, name, uid, revision: r.vars.REVISION, key: r.key, due: r.due, check: r.check, vars: { ...r.vars } };
    return [{ key: r.key, id: measureJobId(data), data }];
  });
}

/** The finished results of `jobs`, by request key, and the jobs with none yet. */
async function finished(
  store: Pick<ResultStore, 'read'>,
  jobs: ReturnType<typeof dueJobs>,
): Promise<{ found: Map<string, Measurement>; missing: typeof jobs }> {
  const results = await store.read(jobs.map((j) => j.id));
  const found = new Map<string, Measurement>();
  const missing: typeof jobs = [];
  jobs.forEach((j, i) => {
    const m = results[i];
    if (m) found.set(j.key, m);
    else missing.push(j);
  });
  return { found, missing };
}

export function measureDesk(store: ResultStore, queue: MeasureAdder): MeasureDesk {
  return {
    collect: async (app: Stored<App>, requests) => {
      const { found, missing } = await finished(store, dueJobs(app, requests));
      if (missing.length > 0) await queue.addBulk(missing.map((j) => ({ name: 'measure', data: j.data, opts: { jobId: j.id } })));
      return found;
    },
  };
}

/** A desk that only reads: the finished results, nothing asked for (a measurement not finished stays pending). */
export function readOnlyDesk(store: Pick<ResultStore, 'read'>): MeasureDesk {
  return { collect: async (app, requests) => (await finished(store, dueJobs(app, requests))).found };
}
