/**
 * What one App's page reads from the apiserver, when a viewer allowed to see it asks: the App (GET), its pods
 * (one LIST by its selector), the ImageLists holding its pre-warm entries (one LIST by its label) and its recent
 * Events (one LIST by field selector, at most EVENTS_READ). A source it may not read becomes a note; the App
 * itself must be readable. The `ebb rollout explain` answer is computed from these reads (the pure part of the
 * command: no plan is made and no queue read, a note says so).
 */
import type { App } from '../../api/app.ts';
import { imageListRef, appRef } from '../../api/group.ts';
import type { ImageList } from '../../api/image-list.ts';
import { prewarmLabelKey } from '../../api/prewarm-keys.ts';
import { explain } from '../../cli/rollout/explain/explain.ts';
import { renderExplanation } from '../../cli/rollout/explain/render.ts';
import { errorFirstLine } from '../../common/errors.ts';
import { isKubeError } from '../../kube/errors.ts';
import { core } from '../../kube/paths.ts';
import type { KubeRest } from '../../kube/rest.ts';
import type { Pod } from '../../kube/types.ts';
import { selectorIsEmpty, selectorString } from '../../workers/app/pods/selector.ts';
import type { AppView, EventRow } from './detail-model.ts';

/** Events asked for at most; the page shows the most recent of them. */
export const EVENTS_READ = 100;
/** Pods read at most (an App has at most this many shown). */
export const PODS_READ = 1000;

interface CoreEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  firstTimestamp?: string | null;
  series?: { lastObservedTime?: string; count?: number } | null;
  metadata?: { creationTimestamp?: string };
  reportingComponent?: string;
  source?: { component?: string };
}

const why = (err: unknown): string => (isKubeError(err, 'Forbidden') ? 'forbidden to the watcher' : errorFirstLine(err));

/** The first of `xs` that is a non-empty string (the core/v1 view of an Event carries nulls for the fields it lacks). */
const first = (...xs: unknown[]): string => xs.find((x): x is string => typeof x === 'string' && x !== '') ?? '';

export function eventRow(e: CoreEvent): EventRow {
  return {
    at: first(e.series?.lastObservedTime, e.lastTimestamp, e.eventTime, e.firstTimestamp, e.metadata?.creationTimestamp),
    type: e.type ?? '',
    reason: e.reason ?? '',
    message: e.message ?? '',
    count: e.series?.count ?? e.count ?? 1,
    from: first(e.reportingComponent, e.source?.component),
  };
}

/** Reads App `namespace/name` and what its page shows; undefined when there is no such App. */
export type AppReader = (namespace: string, name: string, signal: AbortSignal) => Promise<AppView | undefined>;

export function restAppReader(rest: KubeRest, now: () => Date = () => new Date()): AppReader {
  return async (namespace, name, signal) => {
    let app: App;
    try {
      app = await rest.get<App>(appRef(namespace, name), signal);
    } catch (err) {
      if (isKubeError(err, 'NotFound')) return undefined;
      throw err;
    }
    const notes: string[] = [];
    const note = (what: string) => (err: unknown) => {
      notes.push(`${what}: ${why(err)}`);
      return undefined;
    };
    const selector = app.spec.selector && !selectorIsEmpty(app.spec.selector) ? selectorString(app.spec.selector) : undefined;
    const [pods, lists, events] = await Promise.all([
      selector === undefined
        ? Promise.resolve([])
        : rest.list<Pod>(core('pods', namespace), { labelSelector: selector, limit: PODS_READ }, signal).then((r) => r.items, note('pods')),
      rest.list<ImageList>(imageListRef(), { labelSelector: prewarmLabelKey(namespace, name) }, signal).then((r) => r.items, note('ImageLists')),
      rest
        .list<CoreEvent>(core('events', namespace), { fieldSelector: `involvedObject.kind=App,involvedObject.name=${name}`, limit: EVENTS_READ }, signal)
        .then((r) => r.items.map(eventRow), note('Events')),
    ]);
    const at = now();
    const explanation = explain({
      app,
      pods: pods ?? [],
      imageLists: lists,
      plan: undefined,
      queue: undefined,
      notes: ['this page makes no plan and reads no queue: `ebb rollout explain` adds the next actions a reconcile would take'],
      now: at,
    });
    return {
      app,
      pods: pods ?? [],
      events: (events ?? []).sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)),
      explanation,
      explainText: renderExplanation(explanation, { tty: false, absolute: true }),
      notes,
      at: at.toISOString(),
    };
  };
}
