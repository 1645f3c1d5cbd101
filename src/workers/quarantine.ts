/**
 * Quarantine around every reconciler: a key whose earlier runs never ended `limit` times in a row (their workers
 * died or stalled) is not reconciled again until its object changes (a new generation) or an operator releases
 * it (`ebb queue release`). The owner hears of it (an App: condition `Quarantined` and a Warning Event).
 * Redis failures here never stop a reconcile: quarantine fails open.
 */
import { errorSummary } from '../common/errors.ts';
import { formatKey, type ObjectKey, type ObjectKind } from '../queue/names.ts';
import type { QuarantineRecord, QuarantineStore } from '../queue/quarantine.ts';
import type { ReconcileContext, ReconcileResult, Reconciler } from './types.ts';

/** How a kind's owner learns of a quarantine; kinds without hooks are only logged. */
export interface QuarantineHooks {
  /** The object's generation now; undefined when it is gone. */
  generation(key: ObjectKey, ctx: ReconcileContext): Promise<number | undefined>;
  report(key: ObjectKey, ctx: ReconcileContext, record: QuarantineRecord): Promise<void>;
  clear(key: ObjectKey, ctx: ReconcileContext): Promise<void>;
}

export interface QuarantineOptions {
  store: QuarantineStore;
  limit: number;
  hooks: Partial<Record<ObjectKind, QuarantineHooks>>;
}

const held = (record: QuarantineRecord): ReconcileResult => ({
  summary: { quarantined: { since: record.since, unfinishedRuns: record.unfinished } },
  logs: [`quarantined since ${record.since}: ${record.unfinished} earlier runs never ended; change the object or run \`ebb queue release\``],
});

/** Fails open: a store that cannot answer is no quarantine. */
async function quietly<T>(ctx: ReconcileContext, what: string, p: Promise<T>, fallback: T): Promise<T> {
  try {
    return await p;
  } catch (err) {
    ctx.log.warn({ err: errorSummary(err) }, `quarantine: ${what} failed`);
    return fallback;
  }
}

function guarded(inner: Reconciler, kind: ObjectKind, o: QuarantineOptions): Reconciler {
  const hooks = o.hooks[kind];
  return async (key, ctx) => {
    const id = formatKey(key);
    const begun = await quietly(ctx, 'start', o.store.begin(id), { record: undefined, unfinished: 0 });
    const record = begun.record;
    let unfinished = begun.unfinished;
    if (record) {
      const generation = hooks ? await hooks.generation(key, ctx) : undefined;
      if (generation === undefined || generation === record.generation) {
        await quietly(ctx, 'end', o.store.ended(id), undefined);
        return held(record);
      }
      // Releasing forgets the unfinished runs, this one's start too: it is counted again.
      await o.store.release(id);
      ctx.log.info({ generation, heldAt: record.generation }, 'quarantine lifted: the object changed');
      if (hooks) await quietly(ctx, 'clearing the report', hooks.clear(key, ctx), undefined);
      unfinished = await quietly(ctx, 'start', o.store.started(id), 0);
    }
    if (unfinished >= o.limit) {
      const next: QuarantineRecord = { since: ctx.now().toISOString(), unfinished, generation: hooks ? await hooks.generation(key, ctx) : undefined };
      await o.store.hold(id, next);
      await quietly(ctx, 'end', o.store.ended(id), undefined);
      ctx.log.error({ unfinished }, 'quarantined: earlier reconciles of this object never ended (their workers died or stalled)');
      if (hooks) await quietly(ctx, 'the report', hooks.report(key, ctx, next), undefined);
      return held(next);
    }
    try {
      return await inner(key, ctx);
    } finally {
      await quietly(ctx, 'end', o.store.ended(id), undefined);
    }
  };
}

export function withQuarantine(reconcilers: Partial<Record<ObjectKind, Reconciler>>, o: QuarantineOptions): Partial<Record<ObjectKind, Reconciler>> {
  const out: Partial<Record<ObjectKind, Reconciler>> = {};
  for (const [kind, r] of Object.entries(reconcilers) as [ObjectKind, Reconciler][]) out[kind] = guarded(r, kind, o);
  return out;
}
