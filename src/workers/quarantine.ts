/**
 * Quarantine around every reconciler (the rule: `quarantine-plan.ts`): a key whose run died beside others runs
 * alone next; a key whose runs keep dying while alone is held, retried alone after a growing delay, and after
 * that only released by an operator (`ebb queue release`). The owner hears of it (an App: condition
 * `Quarantined` and a Warning Event). Redis failures here never stop a reconcile: quarantine fails open.
 */
import { errorSummary } from '../common/errors.ts';
import { formatKey, type ObjectKey, type ObjectKind } from '../queue/names.ts';
import type { QuarantineRecord, QuarantineStart, QuarantineStore } from '../queue/quarantine.ts';
import { planQuarantine, QUARANTINE_RETRIES, type QuarantinePolicy } from './quarantine-plan.ts';
import { soloLock, type SoloLock } from './solo-lock.ts';
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
  /** Runs killed while alone, in a row, at which a key is held. */
  limit: number;
  /** The first hold's delay before its retry (doubling with each hold in a row). */
  retryAfterMs: number;
  /** Holds in a row retried by themselves; default QUARANTINE_RETRIES. */
  retries?: number;
  hooks: Partial<Record<ObjectKind, QuarantineHooks>>;
}

/** The timer reason of a held key's retry. */
export const QUARANTINE_RETRY = 'quarantine-retry';

function held(key: string, record: QuarantineRecord, retryInMs: number | undefined): ReconcileResult {
  const next = record.retryAt ? `retried alone at ${record.retryAt}` : 'not retried by itself';
  return {
    summary: { quarantined: { since: record.since, unfinishedRuns: record.unfinished, holds: record.strikes ?? 1, retryAt: record.retryAt ?? null } },
    logs: [`quarantined since ${record.since} (its runs killed their worker while running alone): ${next}; \`ebb queue release ${key}\` releases it`],
    ...(retryInMs === undefined ? {} : { wait: { afterMs: retryInMs, reason: QUARANTINE_RETRY } }),
  };
}

/** Fails open: a store that cannot answer is no quarantine. */
async function quietly<T>(ctx: ReconcileContext, what: string, p: Promise<T>, fallback: T): Promise<T> {
  try {
    return await p;
  } catch (err) {
    ctx.log.warn({ err: errorSummary(err) }, `quarantine: ${what} failed`);
    return fallback;
  }
}

const NOTHING: QuarantineStart = { record: undefined, unfinished: 0, unfinishedAlone: 0, released: false };

function guarded(inner: Reconciler, kind: ObjectKind, o: QuarantineOptions, policy: QuarantinePolicy, lock: SoloLock): Reconciler {
  const hooks = o.hooks[kind];
  return async (key, ctx) => {
    const id = formatKey(key);
    // Nothing is marked in flight while waiting for the shared lock: a worker killed by a run alone does not
    // make the runs queued behind it suspects.
    let release = await lock.shared(ctx.signal);
    try {
      const start = await quietly(ctx, 'start', o.store.begin(id), NOTHING);
      const plan = planQuarantine(start, ctx.now(), policy);
      if (plan.do === 'held') {
        await quietly(ctx, 'end', o.store.ended(id), undefined);
        return held(id, plan.record, plan.retryInMs);
      }
      if (plan.do === 'hold') {
        const record = { ...plan.record, generation: hooks ? await quietly(ctx, 'the generation', hooks.generation(key, ctx), undefined) : undefined };
        await quietly(ctx, 'hold', o.store.hold(id, record), undefined);
        await quietly(ctx, 'end', o.store.ended(id), undefined);
        ctx.log.error(
          { unfinished: record.unfinished, holds: record.strikes, retryAt: record.retryAt },
          'quarantined: reconciles of this object killed their worker while running alone',
        );
        if (hooks) await quietly(ctx, 'the report', hooks.report(key, ctx, record), undefined);
        return held(id, record, plan.record.retryAt ? Date.parse(plan.record.retryAt) - ctx.now().getTime() : undefined);
      }
      if (plan.alone) {
        release();
        release = await lock.exclusive(ctx.signal);
        await quietly(ctx, 'marking the run alone', o.store.alone(id), undefined);
        ctx.log.info({ unfinished: start.unfinished, retry: plan.retry }, 'an earlier run of this object died with its worker: running it alone');
      }
      try {
        return await inner(key, ctx);
      } finally {
        await quietly(ctx, 'end', o.store.ended(id), undefined);
        if (plan.retry || plan.withdraw) {
          if (plan.retry) ctx.log.info('quarantine lifted: the retry ran alone and ended');
          await quietly(ctx, 'lifting the hold', o.store.forget(id), undefined);
          if (hooks) await quietly(ctx, 'clearing the report', hooks.clear(key, ctx), undefined);
        }
      }
    } finally {
      release();
    }
  };
}

export function withQuarantine(reconcilers: Partial<Record<ObjectKind, Reconciler>>, o: QuarantineOptions): Partial<Record<ObjectKind, Reconciler>> {
  const policy: QuarantinePolicy = { limit: o.limit, retryAfterMs: o.retryAfterMs, retries: o.retries ?? QUARANTINE_RETRIES };
  // One lock for the process: a run alone is alone among every kind's reconciles.
  const lock = soloLock();
  const out: Partial<Record<ObjectKind, Reconciler>> = {};
  for (const [kind, r] of Object.entries(reconcilers) as [ObjectKind, Reconciler][]) out[kind] = guarded(r, kind, o, policy, lock);
  return out;
}
