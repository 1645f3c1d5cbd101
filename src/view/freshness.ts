/**
 * Whether a reconcile may plan on the view (pure). It may when the view is whole and at least as new as ebb's
 * own last writes to the App's objects:
 * - whole: the App's entry and the sources' marks are of the current complete lists (a watcher that started or
 *   relisted, a Redis that lost them: no marks, read fresh); no entry was left out for its size, and no pod for
 *   the per-App cap (the watcher's `EBB_VIEW_APP_PODS`); a worker's fresh list of the App's pods, not older
 *   than `checkPeriodMs`, found none the watcher does not see (a pod without the App label, or controlled by
 *   another App: the view would not hold it);
 * - as new as ebb's writes: the App's resourceVersion is at least that of ebb's last write of it; each pod ebb
 *   created or patched is there at least at that write's resourceVersion; each pod ebb deleted is gone,
 *   terminating, or another (another uid). A view behind them is waited for; resourceVersions that are not
 *   both decimal integers are not compared (read fresh).
 */
import type { App } from '../api/app.ts';
import type { Pod, Stored } from '../kube/types.ts';
import { decodeEntry } from './entry.ts';
import { Field, oversizedPodField } from './keys.ts';
import { compareResourceVersions } from './rv.ts';

/** The App's hash and the lists hash, as one read returned them. */
export interface RawView {
  fields: Readonly<Record<string, string>>;
  lists: Readonly<Record<string, string>>;
}

export type FreshReason = 'absent' | 'not-listed' | 'oversized' | 'too-many-pods' | 'unchecked' | 'unwatched-pods' | 'opaque-version';

export type Verdict =
  | { use: true; app: Stored<App>; pods: Stored<Pod>[] }
  /** `wait`: the view is behind ebb's own writes (`behind`: the record fields not yet seen); `fresh`: read fresh. */
  | { use: false; why: 'wait'; behind: string[] }
  | { use: false; why: 'fresh'; reason: FreshReason };

/** The complete list of a source kind covering `namespace`: its namespace's source, else the all-namespaces one. */
const listOf = (lists: RawView['lists'], kind: 'apps' | 'pods', namespace: string): string | undefined => lists[`${kind}/${namespace}`] ?? lists[kind];

const fresh = (reason: FreshReason): Verdict => ({ use: false, why: 'fresh', reason });

/** Whether the worker's last fresh list of the App's pods vouches for the view at `nowMs`; else why not. */
function checked(value: string | undefined, nowMs: number, checkPeriodMs: number): FreshReason | undefined {
  const [at, unwatched] = (value ?? '').split(' ');
  const atMs = Number(at);
  if (value === undefined || !Number.isFinite(atMs) || nowMs - atMs > checkPeriodMs || nowMs < atMs - checkPeriodMs) return 'unchecked';
  return unwatched === '0' ? undefined : 'unwatched-pods';
}

interface Whole {
  app: Stored<App>;
  pods: Map<string, Stored<Pod>>;
  gone: Map<string, { uid: string; rv: string }>;
}

/** The pods (live and gone) of pods list `podsList` in the App's hash; 'oversized' when one was left out for its size. */
function podsOf(fields: RawView['fields'], podsList: string): Pick<Whole, 'pods' | 'gone'> | 'oversized' {
  const pods = new Map<string, Stored<Pod>>();
  const gone = new Map<string, { uid: string; rv: string }>();
  for (const [field, text] of Object.entries(fields)) {
    if (!field.startsWith(Field.podPrefix)) continue;
    const e = decodeEntry(text);
    // An entry of an older list: a pod deleted while nothing watched, or rewritten since under the current list.
    if (!e || e.l !== podsList) continue;
    if ('big' in e) return 'oversized';
    const name = field.slice(Field.podPrefix.length);
    if ('gone' in e) gone.set(name, e.gone);
    else pods.set(name, e.o as Stored<Pod>);
  }
  return { pods, gone };
}

/** The App and the pods of the current lists, when the view is whole; else why not. */
function whole(raw: RawView, namespace: string, nowMs: number, checkPeriodMs: number): Whole | FreshReason {
  const appsList = listOf(raw.lists, 'apps', namespace);
  const podsList = listOf(raw.lists, 'pods', namespace);
  if (appsList === undefined || podsList === undefined) return 'not-listed';
  if (Object.keys(raw.lists).some((f) => f.startsWith(oversizedPodField(namespace, '')))) return 'oversized';
  const appEntry = decodeEntry(raw.fields[Field.app]);
  if (!appEntry || appEntry.l !== appsList || 'gone' in appEntry) return 'absent';
  if ('big' in appEntry) return 'oversized';
  // A pod of the current list was left out for the per-App cap (a mark of an older list: a relist since re-added what fits).
  if (decodeEntry(raw.fields[Field.tooMany])?.l === podsList) return 'too-many-pods';
  const notChecked = checked(raw.fields[Field.checked], nowMs, checkPeriodMs);
  if (notChecked) return notChecked;
  const pods = podsOf(raw.fields, podsList);
  return typeof pods === 'string' ? pods : { app: appEntry.o as Stored<App>, ...pods };
}

/** Whether the view has seen ebb's write that record `field` (= `value`) notes: true, false, or 'opaque'. */
function seenWrite(view: Whole, field: string, value: string): boolean | 'opaque' {
  const atLeast = (seen: string | undefined): boolean | 'opaque' => {
    if (seen === undefined) return false;
    const c = compareResourceVersions(seen, value);
    return c === undefined ? 'opaque' : c >= 0;
  };
  if (field === Field.wroteApp) return atLeast(view.app.metadata.resourceVersion);
  if (field.startsWith(Field.wrotePodPrefix)) {
    // The pod as the view last saw it, live or gone: at or past ebb's write of it.
    const name = field.slice(Field.wrotePodPrefix.length);
    return atLeast(view.pods.get(name)?.metadata.resourceVersion ?? view.gone.get(name)?.rv);
  }
  if (field.startsWith(Field.deletedPodPrefix)) {
    // ebb deleted the pod of this uid: the view must show it terminating, gone, or replaced by another.
    const name = field.slice(Field.deletedPodPrefix.length);
    const pod = view.pods.get(name);
    return pod ? pod.metadata.uid !== value || pod.metadata.deletionTimestamp !== undefined : view.gone.has(name);
  }
  return true;
}

/** The verdict on `raw` for an App of `namespace` at `nowMs`. */
export function judge(raw: RawView | undefined, namespace: string, nowMs: number, checkPeriodMs: number): Verdict {
  if (!raw) return fresh('absent');
  const view = whole(raw, namespace, nowMs, checkPeriodMs);
  if (typeof view === 'string') return fresh(view);
  const behind: string[] = [];
  for (const [field, value] of Object.entries(raw.fields)) {
    const seen = seenWrite(view, field, value);
    if (seen === 'opaque') return fresh('opaque-version');
    if (!seen) behind.push(field);
  }
  if (behind.length > 0) return { use: false, why: 'wait', behind };
  return { use: true, app: view.app, pods: [...view.pods.values()] };
}
