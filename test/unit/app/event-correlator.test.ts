import { describe, expect, it } from 'vitest';
import { EventReason } from '../../../src/api/keys.ts';
import type { EventSpec } from '../../../src/workers/app/model/actions.ts';
import { COMBINED_PREFIX, CORRELATOR_DEFAULTS, EventCorrelator } from '../../../src/workers/app/events/correlator.ts';
import { correlatedEvents, type EventWriter } from '../../../src/workers/app/events/recorder.ts';
import { makeApp } from './fixtures.ts';

const app = makeApp('web');
const other = { ...makeApp('db'), metadata: { ...makeApp('db').metadata, uid: 'uid-db' } };
// Reasons beyond ebb's own are made up here to tell keys apart.
const spec = (message: string, reason: string = EventReason.successfulCreate): EventSpec => ({
  type: 'Normal',
  reason: reason as EventReason,
  action: 'Create',
  message,
});
const MIN = 60_000;

describe('EventCorrelator', () => {
  it('counts an isomorphic Event into the first one while the series is open, then starts a new one', () => {
    const c = new EventCorrelator();
    const first = c.decide(app, spec('create Pod web-0'), 0);
    expect(first.kind).toBe('create');
    if (first.kind === 'create') c.created(first.key, 'web.1');
    expect(c.decide(app, spec('create Pod web-0'), 1 * MIN)).toMatchObject({ kind: 'count' });
    expect(c.decide(app, spec('create Pod web-0'), 6.5 * MIN)).toMatchObject({ kind: 'count' });
    // Six minutes with no occurrence end the series.
    expect(c.decide(app, spec('create Pod web-0'), 13 * MIN)).toMatchObject({ kind: 'create' });
  });

  it('keeps Apps apart and different notes apart', () => {
    const c = new EventCorrelator();
    expect(c.decide(app, spec('x'), 0).kind).toBe('create');
    expect(c.decide(other, spec('x'), 0).kind).toBe('create');
    expect(c.decide(app, spec('y'), 0).kind).toBe('create');
    expect(c.decide(app, spec('x', 'SuccessfulDelete'), 0).kind).toBe('create');
  });

  it('combines similar Events after the limit into one Event with a count', () => {
    const c = new EventCorrelator();
    const kinds = Array.from({ length: 14 }, (_, i) => c.decide(app, spec(`create Pod web-${i}`), i * 1000));
    expect(kinds.slice(0, 10).every((d) => d.kind === 'create')).toBe(true);
    const combined = kinds[10];
    expect(combined).toMatchObject({ kind: 'create', spec: { message: `${COMBINED_PREFIX}create Pod web-10` } });
    if (combined?.kind === 'create') expect(combined.spec.related).toBeUndefined();
    expect(kinds.slice(11).map((d) => d.kind)).toEqual(['count', 'count', 'count']);
    // After the window, notes are individual again.
    expect(c.decide(app, spec('create Pod web-99'), 11 * MIN).kind).toBe('create');
  });

  it('rate-limits creates per App: a burst, then one per refill period', () => {
    const c = new EventCorrelator({ ...CORRELATOR_DEFAULTS, similarLimit: 1000 });
    const burst = Array.from({ length: 30 }, (_, i) => c.decide(app, spec(`m${i}`, `R${i}`), 0).kind);
    expect(burst.filter((k) => k === 'create')).toHaveLength(25);
    expect(burst.slice(25)).toEqual(['drop', 'drop', 'drop', 'drop', 'drop']);
    expect(c.decide(other, spec('m0', 'R0'), 0).kind).toBe('create');
    expect(c.decide(app, spec('late', 'L'), 4 * MIN).kind).toBe('drop');
    expect(c.decide(app, spec('later', 'L2'), 5 * MIN).kind).toBe('create');
    expect(c.decide(app, spec('later2', 'L3'), 5 * MIN).kind).toBe('drop');
  });

  it('reports a grown series as due once per heartbeat, and at its end', () => {
    const c = new EventCorrelator();
    const d = c.decide(app, spec('x'), 0);
    if (d.kind === 'create') c.created(d.key, 'web.1');
    expect(c.due(30_000)).toEqual([]);
    c.decide(app, spec('x'), 10_000);
    c.decide(app, spec('x'), 20_000);
    expect(c.due(30_000)).toEqual([]);
    const due = c.due(60_000);
    expect(due).toEqual([{ key: d.kind === 'create' ? d.key : '', namespace: app.metadata.namespace, name: 'web.1', count: 3, lastObserved: 20_000 }]);
    c.wrote(due[0]?.key ?? '', 3, 60_000);
    expect(c.due(200_000)).toEqual([]);
  });

  it('forgets a key whose create failed, so the next occurrence is created again', () => {
    const c = new EventCorrelator();
    const d = c.decide(app, spec('x'), 0);
    if (d.kind === 'create') c.created(d.key, undefined);
    expect(c.decide(app, spec('x'), 1000).kind).toBe('create');
  });
});

describe('correlatedEvents', () => {
  function fakeWriter(): EventWriter & { created: string[]; patches: unknown[] } {
    const created: string[] = [];
    const patches: unknown[] = [];
    return {
      created,
      patches,
      create: (_app, s) => {
        created.push(s.message);
        return Promise.resolve(`ev${created.length}`);
      },
      patch: (ns, name, patch) => {
        patches.push({ ns, name, patch });
        return Promise.resolve();
      },
    };
  }

  it('writes one Event for a repeated one and patches its series count on the heartbeat', async () => {
    const events = correlatedEvents(new EventCorrelator(), MIN);
    const writer = fakeWriter();
    const rec = events.recorder(writer);
    for (let i = 0; i < 5; i++) await rec.record(app, spec('waiting for hook'), new Date(i * 1000));
    expect(writer.created).toEqual(['waiting for hook']);
    await events.flush(new Date(2 * MIN));
    expect(writer.patches).toEqual([
      { ns: app.metadata.namespace, name: 'ev1', patch: { series: { count: 5, lastObservedTime: '1970-01-01T00:00:04.000000Z' } } },
    ]);
    events.stop();
  });

  it("writes a wave's Events as upstream's recorders do: one series patch per recreated pod, never a lost repeat", async () => {
    // An App of 3: its pods created, then each deleted and created again 2 minutes later (a recreate rollout).
    const created = (i: number): EventSpec => ({ ...spec(`create Pod web-${i} in App web successful`), related: { kind: 'Pod', name: `web-${i}` } });
    const deleted = (i: number): EventSpec => ({
      ...spec(`delete Pod web-${i} in App web successful (update)`, EventReason.successfulDelete),
      action: 'Delete',
    });
    const events = correlatedEvents(new EventCorrelator(), MIN);
    const writer = fakeWriter();
    const rec = events.recorder(writer);
    for (let i = 0; i < 3; i++) await rec.record(app, created(i), new Date(i * 1000));
    for (let i = 0; i < 3; i++) {
      await rec.record(app, deleted(i), new Date(2 * MIN + i * 10_000));
      await rec.record(app, created(i), new Date(2 * MIN + i * 10_000 + 5_000));
    }
    await events.flush(new Date(4 * MIN));
    // The repeated create is isomorphic to the first (same App, reason, pod and note, 2 minutes apart): the
    // core/v1 recorder patches its count, the events.k8s.io one patches a series of 2; so does ebb, once each.
    expect(writer.created).toHaveLength(6);
    expect(writer.patches.map((p) => (p as { patch: { series: { count: number } } }).patch.series.count)).toEqual([2, 2, 2]);
    // Past the 6-minute window the repeat is an Event of its own (as the events.k8s.io recorder does): no patch.
    await rec.record(app, created(0), new Date(12 * MIN));
    await events.flush(new Date(14 * MIN));
    expect(writer.created).toHaveLength(7);
    expect(writer.patches).toHaveLength(3);
    events.stop();
  });

  it('looks for due series at most once a second, however many Events are recorded', async () => {
    const correlator = new EventCorrelator();
    let scans = 0;
    const due = correlator.due.bind(correlator);
    correlator.due = (now, all) => (scans++, due(now, all));
    const events = correlatedEvents(correlator, MIN);
    const rec = events.recorder(fakeWriter());
    for (let i = 0; i < 50; i++) await rec.record(app, spec(`event ${i % 5}`), new Date(i * 10));
    expect(scans, '50 Events in 0.5 s').toBe(1);
    await rec.record(app, spec('later'), new Date(1500));
    expect(scans).toBe(2);
    events.stop();
  });

  it('passes a failed create on and creates the Event again next time', async () => {
    const events = correlatedEvents(new EventCorrelator(), MIN);
    let fail = true;
    const writer = { ...fakeWriter(), create: () => (fail ? Promise.reject(new Error('boom')) : Promise.resolve('ok')) };
    await expect(events.recorder(writer).record(app, spec('x'), new Date(0))).rejects.toThrow('boom');
    fail = false;
    await expect(events.recorder(writer).record(app, spec('x'), new Date(1000))).resolves.toBeUndefined();
    events.stop();
  });
});
