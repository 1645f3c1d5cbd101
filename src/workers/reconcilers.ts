import type { ObjectKind } from '../queue/names.ts';
import { appReconciler } from './app/reconcile.ts';
import type { AppClient, ImageListStore } from './app/model/client.ts';
import { workerEvents } from './app/events/recorder.ts';
import { restAppClient, restEventWriter } from './app/rest-client.ts';
import { notifyingRecorder } from './notify/deliver.ts';
import { viewedClient } from './view.ts';
import { imageListReconciler } from './imagelist/reconcile.ts';
import { restPullJobClient } from './pulljob/client.ts';
import { imagePullJobReconciler } from './pulljob/reconcile.ts';
import type { Reconciler } from './types.ts';

/** What the reconcilers take from the worker's configuration. */
export interface ReconcilerOptions {
  /** Where ImageList pull secrets are copied for the node daemons; undefined: pull secrets are not used. */
  pullSecretNamespace?: string | undefined;
  /** `off`: every App Event written as its own object (a diagnostic); default `on`. */
  eventCorrelation?: 'on' | 'off';
}

/**
 * Pre-warm entries without their pull secrets: where pull secrets are not enabled, the worker does not name
 * them (admission would refuse a Secret the worker may not read, and the daemon could not use it anyway).
 */
export function withoutPullSecrets(store: ImageListStore): ImageListStore {
  const strip = (body: unknown): unknown => {
    const b = body as { spec?: { images?: Record<string, unknown>[] } };
    if (!b.spec?.images) return body;
    return { ...b, spec: { ...b.spec, images: b.spec.images.map(({ pullSecret: _dropped, ...entry }) => entry) } };
  };
  return { list: (selector) => store.list(selector), apply: (name, body, manager) => store.apply(name, strip(body), manager) };
}

/** The worker's reconcilers, and what must be written before the process exits. */
export interface WorkerReconcilers {
  byKind: Record<ObjectKind, Reconciler>;
  /** Writes the Event series counts not written yet (a worker scaled down or restarted would lose them). */
  drain: () => Promise<void>;
}

/** The reconcile function for each kind the worker handles. */
export function reconcilers(opts: ReconcilerOptions = {}): Record<ObjectKind, Reconciler> {
  return workerReconcilers(opts).byKind;
}

/** `reconcilers`, with the drain the worker runs once its last reconcile ended. */
export function workerReconcilers(opts: ReconcilerOptions = {}): WorkerReconcilers {
  const enabled = opts.pullSecretNamespace !== undefined;
  // One correlator per worker process: repeated Events become series, similar ones are combined, rate-limited.
  const events = workerEvents(opts.eventCorrelation !== 'off');
  const appClient = (ctx: Parameters<Reconciler>[1]): AppClient => {
    const recorder = events.recorder(restEventWriter(ctx.rest));
    const rest = restAppClient(ctx.rest, ctx.signal, ctx.notify ? notifyingRecorder(recorder, ctx.notify, ctx.log) : recorder, ctx.checks);
    const measured = ctx.measure ? { ...rest, measureDesk: ctx.measure } : rest;
    const client = viewedClient(measured, ctx);
    return enabled ? client : { ...client, imageLists: withoutPullSecrets(client.imageLists) };
  };
  const byKind = {
    App: appReconciler(appClient),
    ImageList: imageListReconciler(opts.pullSecretNamespace),
    ImagePullJob: imagePullJobReconciler((ctx) => restPullJobClient(ctx.rest, ctx.signal, enabled)),
  };
  const drain = async (): Promise<void> => {
    events.stop();
    await events.flush(new Date(), true);
  };
  return { byKind, drain };
}
