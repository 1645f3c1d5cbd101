/**
 * The worker's Event correlation against the real apiserver: a repeated Event is written once and its
 * `series` patched with the count, and similar Events beyond the limit become one combined Event.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/api/app.ts';
import { appRef } from '../../../src/api/group.ts';
import { EventReason } from '../../../src/api/keys.ts';
import type { Stored } from '../../../src/kube/types.ts';
import { COMBINED_PREFIX, CORRELATOR_DEFAULTS, EventCorrelator } from '../../../src/workers/app/events/correlator.ts';
import { correlatedEvents } from '../../../src/workers/app/events/recorder.ts';
import { restEventWriter } from '../../../src/workers/app/rest-client.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { createApp, eventsOf, uniqueName, type EventObject } from './harness.ts';

let ns = '';

beforeAll(async () => {
  ns = await freshNamespace('app-events');
});

type WithSeries = EventObject & { series?: { count: number; lastObservedTime: string } };

async function storedApp(name: string): Promise<Stored<App>> {
  await createApp(ns, name, { replicas: 0 });
  return sandbox().rest.get<Stored<App>>(appRef(ns, name));
}

describe('correlated Events on the apiserver', () => {
  it('writes a repeated Event once, then its series count', async () => {
    const app = await storedApp(uniqueName('ev'));
    const events = correlatedEvents(new EventCorrelator(), CORRELATOR_DEFAULTS.heartbeatMs);
    const rec = events.recorder(restEventWriter(sandbox().rest));
    const spec = { type: 'Warning' as const, reason: EventReason.lifecycleHookWaiting, action: 'Wait', message: 'Pod x-1 waits on preDelete' };
    const t0 = Date.now();
    for (let i = 0; i < 4; i++) await rec.record(app, spec, new Date(t0 + i * 1000));
    const before = (await eventsOf(ns, app.metadata.name, 'LifecycleHookWaiting')) as WithSeries[];
    expect(before).toHaveLength(1);
    expect(before[0]?.series).toBeUndefined();
    await events.flush(new Date(t0 + CORRELATOR_DEFAULTS.heartbeatMs + 5000));
    const after = (await eventsOf(ns, app.metadata.name, 'LifecycleHookWaiting')) as WithSeries[];
    expect(after).toHaveLength(1);
    expect(after[0]?.series?.count).toBe(4);
    expect(Date.parse(after[0]?.series?.lastObservedTime ?? '')).toBe(t0 + 3000);
    events.stop();
  });

  it('combines similar Events beyond the limit into one', async () => {
    const app = await storedApp(uniqueName('ev'));
    const events = correlatedEvents(new EventCorrelator(), CORRELATOR_DEFAULTS.heartbeatMs);
    const rec = events.recorder(restEventWriter(sandbox().rest));
    const now = Date.now();
    for (let i = 0; i < 15; i++) {
      await rec.record(app, { type: 'Normal', reason: EventReason.successfulCreate, action: 'Create', message: `create Pod p-${i}` }, new Date(now + i));
    }
    await events.flush(new Date(now + 10 * 60_000), true);
    const list = (await eventsOf(ns, app.metadata.name, 'SuccessfulCreate')) as WithSeries[];
    expect(list).toHaveLength(11);
    const combined = list.filter((e) => e.note.startsWith(COMBINED_PREFIX));
    expect(combined).toHaveLength(1);
    expect(combined[0]?.series?.count).toBe(5);
    events.stop();
  });
});
