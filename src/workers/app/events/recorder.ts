/**
 * The App reconcile's Event recorder for one worker process: the correlator decides (create, count into a
 * series, or drop), this writes. Series counts are patched on a heartbeat, from the next Event recorded or from
 * an unreferenced timer, so an idle worker still writes them and never stays up for them.
 */
import type { App } from '../../../api/app.ts';
import { isKubeError } from '../../../kube/errors.ts';
import type { Stored } from '../../../kube/types.ts';
import type { EventSpec } from '../model/actions.ts';
import type { EventRecorder } from '../model/client.ts';
import { CORRELATOR_DEFAULTS, EventCorrelator } from './correlator.ts';
import { microTime } from '../../shared/event-fields.ts';

/** Where Events go: create one, or merge-patch one (its `series`). */
export interface EventWriter {
  create(app: Stored<App>, spec: EventSpec, now: Date): Promise<string | undefined>;
  patch(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
}

export interface CorrelatedEvents {
  /** A recorder writing through `writer` (the latest writer given also serves the heartbeat). */
  recorder(writer: EventWriter): EventRecorder;
  /** Writes the series that are due now (`all`: every series whose count grew). */
  flush(now: Date, all?: boolean): Promise<void>;
  stop(): void;
}

/** Series are patched once per heartbeat (a minute): looking for due ones once a second is often enough. */
const SCAN_INTERVAL_MS = 1_000;

export function correlatedEvents(correlator: EventCorrelator, heartbeatMs: number, clock: () => Date = () => new Date()): CorrelatedEvents {
  let latest: EventWriter | undefined;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  // Finding the due series walks every key the correlator holds: an Event recorded does it at most this often.
  const scanMs = Math.min(heartbeatMs, SCAN_INTERVAL_MS);
  let scannedAt = Number.NEGATIVE_INFINITY;

  const writeDue = async (now: Date, all: boolean): Promise<void> => {
    const writer = latest;
    if (!writer) return;
    for (const s of correlator.due(now.getTime(), all)) {
      const patch = { series: { count: s.count, lastObservedTime: microTime(new Date(s.lastObserved)) } };
      // Written or not, the series is not retried before its next heartbeat: an Event is best effort.
      correlator.wrote(s.key, s.count, now.getTime());
      await writer.patch(s.namespace, s.name, patch).catch((err: unknown) => {
        if (isKubeError(err, 'NotFound')) correlator.created(s.key, undefined);
      });
    }
  };
  const flush = (now: Date, all = false): Promise<void> => {
    flushing ??= writeDue(now, all).finally(() => (flushing = undefined));
    return flushing;
  };
  const startTimer = (): void => {
    if (timer) return;
    timer = setInterval(() => void flush(clock()), heartbeatMs);
    timer.unref();
  };

  return {
    recorder: (writer) => ({
      record: async (app, spec, now) => {
        latest = writer;
        startTimer();
        if (Math.abs(now.getTime() - scannedAt) >= scanMs) {
          scannedAt = now.getTime();
          await flush(now);
        }
        const decision = correlator.decide(app, spec, now.getTime());
        if (decision.kind !== 'create') return;
        try {
          correlator.created(decision.key, await writer.create(app, decision.spec, now));
        } catch (err) {
          correlator.created(decision.key, undefined);
          throw err;
        }
      },
    }),
    flush,
    stop: () => {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** Every Event written as it is recorded, with no correlation (tests, tools, and `EBB_EVENT_CORRELATION=off`). */
export function uncorrelated(writer: EventWriter): EventRecorder {
  return {
    record: async (app, event, now) => {
      await writer.create(app, event, now);
    },
  };
}

/**
 * The worker process's Events: one correlator for every reconcile (`correlate`, the default), or each Event
 * written as its own object, as a diagnostic to compare the Event traffic with and without correlation.
 */
export function workerEvents(correlate: boolean): Pick<CorrelatedEvents, 'recorder' | 'flush' | 'stop'> {
  if (!correlate) return { recorder: uncorrelated, flush: () => Promise.resolve(), stop: () => undefined };
  return correlatedEvents(new EventCorrelator(CORRELATOR_DEFAULTS), CORRELATOR_DEFAULTS.heartbeatMs);
}
