/**
 * Quarantine on the sandbox: an App whose last five reconciles never ended (as if each had taken its worker
 * down; the in-flight marks are written here as a dying worker leaves them) is held: condition Quarantined and a
 * Warning Event, no pod created. A spec change lifts it and the App rolls out; `ebb queue release` is the other
 * way out (unit-tested with the store).
 */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { formatKey } from '../../../src/queue/names.ts';
import { redisQuarantine } from '../../../src/queue/quarantine.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { createApp, eventsOf, getApp, patchApp, podsOf, settled, template, uniqueName, useController } from './harness.ts';

const ctl = useController('app-quarantine');

describe('quarantine', () => {
  it('holds an App whose reconciles never ended, says so, and lets it go when its spec changes', async () => {
    const name = uniqueName('q');
    const cfg = parseQueueConfig(ctl.env);
    const conn = redisConnection(cfg.redis, { forWorker: false });
    try {
      const store = redisQuarantine(conn, cfg.prefix);
      const id = formatKey({ kind: 'App', namespace: ctl.ns, name });
      for (let i = 0; i < 5; i++) await store.started(id);
      await createApp(ctl.ns, name, { replicas: 2, template: template(name, 'v1') });
      const held = await waitFor(
        async () => {
          const app = await getApp(ctl.ns, name);
          return app.status?.conditions?.find((c) => c.type === ConditionType.quarantined && c.status === 'True') ? app : undefined;
        },
        { timeoutMs: 30_000, what: 'the Quarantined condition' },
      );
      expect(held.status?.conditions?.find((c) => c.type === ConditionType.quarantined)).toMatchObject({ reason: Reason.workersLost });
      const events = await eventsOf(ctl.ns, name, EventReason.quarantined);
      expect(events).toHaveLength(1);
      expect(events[0]?.note).toContain('5 in a row never ended');
      expect(await podsOf(ctl.ns, name), 'no pod while held').toEqual([]);
      expect((await store.get(id))?.generation).toBe(1);

      await patchApp(ctl.ns, name, { replicas: 1 });
      const s = await settled(ctl.ns, name);
      expect(s.pods).toHaveLength(1);
      const app = await getApp(ctl.ns, name);
      expect(app.status?.conditions?.find((c) => c.type === ConditionType.quarantined)).toMatchObject({ status: 'False', reason: Reason.released });
      expect(await store.get(id)).toBeUndefined();
    } finally {
      conn.disconnect();
    }
  });
});
