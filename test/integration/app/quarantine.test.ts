/**
 * Quarantine on the sandbox, in-process: an App whose last three reconciles were killed while running alone (the
 * marks written here as dying workers leave them) is held: condition Quarantined and a Warning Event that says how
 * to release it, no pod created. A spec change does not lift the hold; the operator's release (`ebb queue
 * release`, the store's `release`) does, and the App rolls out. The attack with real worker kills is in
 * `quarantine-culprit.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { ConditionType, EventReason, Reason } from '../../../src/api/keys.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { redisConnection } from '../../../src/queue/connection.ts';
import { formatKey } from '../../../src/queue/names.ts';
import { redisQuarantine } from '../../../src/queue/quarantine.ts';
import { createReconcileQueue } from '../../../src/queue/queues.ts';
import { parseQueueConfig } from '../../../src/queue/settings.ts';
import { heldRunsSince } from './quarantine-support.ts';
import { createApp, eventsOf, getApp, patchApp, podsOf, settled, template, uniqueName, useController } from './harness.ts';

const ctl = useController('app-quarantine');

describe('quarantine', () => {
  it('holds an App whose reconciles killed their worker while alone, says how to release it, and lets only a release lift it', async () => {
    const name = uniqueName('q');
    const cfg = parseQueueConfig(ctl.env);
    const conn = redisConnection(cfg.redis, { forWorker: false });
    const queue = createReconcileQueue(conn, cfg);
    try {
      const store = redisQuarantine(conn, cfg.prefix);
      const key = { kind: 'App' as const, namespace: ctl.ns, name };
      const id = formatKey(key);
      for (let i = 0; i < 3; i++) {
        await store.started(id);
        await store.alone(id);
      }
      await createApp(ctl.ns, name, { replicas: 2, template: template(name, 'v1') });
      const held = await waitFor(
        async () => {
          const app = await getApp(ctl.ns, name);
          return app.status?.conditions?.find((c) => c.type === ConditionType.quarantined && c.status === 'True') ? app : undefined;
        },
        { timeoutMs: 30_000, what: 'the Quarantined condition' },
      );
      const condition = held.status?.conditions?.find((c) => c.type === ConditionType.quarantined);
      expect(condition).toMatchObject({ reason: Reason.workersLost });
      expect(condition?.message).toContain(`ebb queue release App ${ctl.ns}/${name}`);
      expect(condition?.message).toContain('a spec change does not lift the hold');
      const events = await eventsOf(ctl.ns, name, EventReason.quarantined);
      expect(events).toHaveLength(1);
      expect(events[0]?.note).toContain('killed their worker while running alone');
      expect(await podsOf(ctl.ns, name), 'no pod while held').toEqual([]);
      expect(await store.get(id)).toMatchObject({ generation: 1, strikes: 1 });

      // The spec change is reconciled (its job ends held) and the hold stays.
      const edited = Date.now();
      await patchApp(ctl.ns, name, { replicas: 1 });
      await waitFor(async () => ((await heldRunsSince(queue, key, edited)) > 0 ? true : undefined), { timeoutMs: 15_000, what: 'the edit handled, held' });
      expect(await store.get(id), 'a spec change does not lift a hold').toBeDefined();
      expect(await podsOf(ctl.ns, name)).toEqual([]);

      expect(await store.release(id)).toBe(true);
      await patchApp(ctl.ns, name, { replicas: 2 });
      const s = await settled(ctl.ns, name);
      expect(s.pods).toHaveLength(2);
      const app = await waitFor(
        async () => {
          const a = await getApp(ctl.ns, name);
          return a.status?.conditions?.find((c) => c.type === ConditionType.quarantined)?.status === 'False' ? a : undefined;
        },
        { timeoutMs: 10_000, what: 'the report withdrawn' },
      );
      expect(app.status?.conditions?.find((c) => c.type === ConditionType.quarantined)).toMatchObject({ reason: Reason.released });
      expect(await store.get(id)).toBeUndefined();
    } finally {
      await queue.close();
      conn.disconnect();
    }
  });
});
