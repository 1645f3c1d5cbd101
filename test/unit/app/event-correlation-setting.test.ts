import { describe, expect, it } from 'vitest';
import { EventReason } from '../../../src/api/keys.ts';
import type { EventSpec } from '../../../src/workers/app/model/actions.ts';
import { workerEvents, type EventWriter } from '../../../src/workers/app/events/recorder.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { makeApp } from './fixtures.ts';

const base = { KUBECONFIG: '/nowhere/kubeconfig', EBB_REDIS_URL: 'redis://127.0.0.1:1' };
const spec: EventSpec = { type: 'Warning', reason: EventReason.failedCreate, action: 'Create', message: 'create Pod web-0 in App ns/web failed: quota' };

function fakeWriter(): EventWriter & { creates: number; patches: number } {
  const w = {
    creates: 0,
    patches: 0,
    create: () => Promise.resolve(`web.${++w.creates}`),
    patch: () => {
      w.patches++;
      return Promise.resolve();
    },
  };
  return w;
}

describe('EBB_EVENT_CORRELATION', () => {
  it('is on unless set to off, and refuses other values', () => {
    expect(parseWorkerConfig(base).eventCorrelation).toBe('on');
    expect(parseWorkerConfig({ ...base, EBB_EVENT_CORRELATION: 'off' }).eventCorrelation).toBe('off');
    expect(() => parseWorkerConfig({ ...base, EBB_EVENT_CORRELATION: 'no' })).toThrow(/EBB_EVENT_CORRELATION/);
  });

  it('on: a repeated Event is created once', async () => {
    const events = workerEvents(true);
    const writer = fakeWriter();
    const rec = events.recorder(writer);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await rec.record(makeApp('web'), spec, new Date(t0 + i * 1000));
    events.stop();
    expect(writer.creates).toBe(1);
  });

  it('off: every Event is created as its own object, none patched', async () => {
    const events = workerEvents(false);
    const writer = fakeWriter();
    const rec = events.recorder(writer);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await rec.record(makeApp('web'), spec, new Date(t0 + i * 1000));
    events.stop();
    expect([writer.creates, writer.patches]).toEqual([5, 0]);
  });
});
