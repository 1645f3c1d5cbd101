/** How an App hears that its reconciles are quarantined: condition `Quarantined` and a Warning Event. */
import type { App } from '../../api/app.ts';
import { appRef } from '../../api/group.ts';
import { ConditionType, EventReason, FieldManager, Reason } from '../../api/keys.ts';
import { isKubeError } from '../../kube/errors.ts';
import { PatchType } from '../../kube/rest.ts';
import type { Stored } from '../../kube/types.ts';
import type { QuarantineRecord } from '../../queue/quarantine.ts';
import type { QuarantineHooks } from '../quarantine.ts';
import type { ReconcileContext } from '../types.ts';
import { restEventWriter } from './rest-client.ts';
import { findCondition, setCondition, type ConditionInput } from '../shared/conditions.ts';

async function getApp(ctx: ReconcileContext, ns: string, name: string): Promise<Stored<App> | undefined> {
  try {
    return await ctx.rest.get<Stored<App>>(appRef(ns, name), ctx.signal);
  } catch (err) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

async function writeCondition(ctx: ReconcileContext, app: Stored<App>, input: ConditionInput): Promise<void> {
  const conditions = setCondition(app.status?.conditions, input, ctx.now(), app.metadata.generation);
  const patch = { metadata: { resourceVersion: app.metadata.resourceVersion }, status: { conditions } };
  await ctx.rest.patch(appRef(app.metadata.namespace, app.metadata.name, 'status'), patch, PatchType.merge, { fieldManager: FieldManager.ebb }, ctx.signal);
}

export function describeQuarantine(namespace: string, name: string, record: QuarantineRecord): string {
  const holds = record.strikes ?? 1;
  const next = record.retryAt ? `ebb retries it alone at ${record.retryAt}` : `ebb no longer retries it by itself`;
  return (
    `reconciles of App ${name} are held since ${record.since} (hold ${holds}): its reconciles killed their worker while running alone; ` +
    `${next}; a spec change does not lift the hold; \`ebb queue release App ${namespace}/${name}\` releases it`
  );
}

export const appQuarantineHooks: QuarantineHooks = {
  generation: async (key, ctx) => (await getApp(ctx, key.namespace, key.name))?.metadata.generation,
  report: async (key, ctx, record) => {
    const app = await getApp(ctx, key.namespace, key.name);
    if (!app) return;
    const message = describeQuarantine(app.metadata.namespace, app.metadata.name, record);
    await writeCondition(ctx, app, { type: ConditionType.quarantined, status: 'True', reason: Reason.workersLost, message });
    const event = { type: 'Warning' as const, reason: EventReason.quarantined, action: 'Quarantine', message };
    await restEventWriter(ctx.rest).create(app, event, ctx.now());
  },
  clear: async (key, ctx) => {
    const app = await getApp(ctx, key.namespace, key.name);
    if (!app || findCondition(app.status?.conditions, ConditionType.quarantined)?.status !== 'True') return;
    await writeCondition(ctx, app, { type: ConditionType.quarantined, status: 'False', reason: Reason.released, message: 'reconciles resumed' });
  },
};
