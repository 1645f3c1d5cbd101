/**
 * `canUpdateInPlace`: can a pod created from one template be moved to another without being recreated?
 * The parts that can change on a running pod are taken out of both templates —
 * container and initContainer images, template labels and annotations, and (when the cluster has pods/resize)
 * container cpu/memory requests and limits — and fast-json-patch diffs what is left: any remaining operation
 * names the JSON path that forces a new pod. The removed parts become the plan.
 */
import fjp from 'fast-json-patch';
import { isRecord } from '../../common/guards.ts';
import { effectiveRequests, qosClass, RESIZABLE, resizableOf, sameResizable } from '../../common/quantity.ts';
import type { DiffResult, InPlacePlan, TemplateLike } from './types.ts';
import type { ResourceRequirements } from '../../kube/types.ts';
import { Annotation } from '../../api/keys.ts';

export interface DiffOptions {
  /** The apiserver serves the pods/resize subresource (Kubernetes ≥ 1.33 with InPlacePodVerticalScaling). */
  resizeSupported: boolean;
}

type Json = Record<string, unknown>;
interface Container {
  name: string;
  image: string;
  resources?: ResourceRequirements;
}
const LISTS = ['containers', 'initContainers'] as const;
const PARTS = ['requests', 'limits'] as const;

const containersOf = (t: TemplateLike, list: (typeof LISTS)[number]): readonly Container[] => t.spec[list] ?? [];

function deleteIfEmpty(parent: Json, key: string): void {
  const v = parent[key];
  if (isRecord(v) && Object.keys(v).length === 0) delete parent[key];
}

/** Removes cpu/memory requests and limits, and then any object left empty by that. */
function stripResizable(container: Json): void {
  const res = container.resources;
  if (!isRecord(res)) return;
  for (const part of PARTS) {
    const list = res[part];
    if (!isRecord(list)) continue;
    for (const r of RESIZABLE) delete list[r];
    deleteIfEmpty(res, part);
  }
  deleteIfEmpty(container, 'resources');
}

/** The template without what an in-place update can change. */
function stripMutable(template: TemplateLike, opts: DiffOptions): Json {
  const t = structuredClone(template) as unknown as Json;
  if (isRecord(t.metadata)) {
    // A restart stamp stays: a changed one asks for new containers, which only a new pod gives.
    const restartedAt = isRecord(t.metadata.annotations) ? t.metadata.annotations[Annotation.restartedAt] : undefined;
    delete t.metadata.labels;
    delete t.metadata.annotations;
    if (restartedAt !== undefined) t.metadata.annotations = { [Annotation.restartedAt]: restartedAt };
    deleteIfEmpty(t, 'metadata');
  }
  const spec = isRecord(t.spec) ? t.spec : {};
  for (const list of LISTS) {
    const containers = Array.isArray(spec[list]) ? (spec[list] as unknown[]) : [];
    for (const c of containers) {
      if (!isRecord(c)) continue;
      delete c.image;
      if (list === 'containers' && opts.resizeSupported) stripResizable(c);
    }
  }
  return t;
}

/** `/spec/containers/0/env` → `spec.containers[0].env` (for messages). */
export function displayPath(pointer: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc === '' ? p : `${acc}.${p}`), '');
}

const RESTART_POINTER = `/metadata/annotations/${Annotation.restartedAt.replace(/~/g, '~0').replace(/\//g, '~1')}`;

const VERB: Record<string, string> = { add: 'added', remove: 'removed', replace: 'changed', move: 'moved', copy: 'copied' };

/**
 * An added or removed object is reported by its first leaf (`/metadata` {finalizers} → `/metadata/finalizers`);
 * an added or removed list item (a container) by its index.
 */
function leafPath(path: string, value: unknown): string {
  let [p, v] = [path, value];
  while (isRecord(v) && !/\/\d+$/.test(p)) {
    const key = Object.keys(v).sort()[0];
    if (key === undefined) break;
    [p, v] = [`${p}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, v[key]];
  }
  return p;
}

function firstOffending(old: TemplateLike, next: TemplateLike, opts: DiffOptions): { reason: string; path: string } | undefined {
  const before = stripMutable(old, opts);
  const ops = fjp.compare(before, stripMutable(next, opts));
  const first = [...ops].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))[0];
  if (!first) return undefined;
  const removed: unknown = first.op === 'remove' ? fjp.getValueByPointer(before, first.path) : undefined;
  const value: unknown = first.op === 'add' ? first.value : removed;
  const path = leafPath(first.path, value);
  if (path === RESTART_POINTER)
    return { reason: `a restart was asked (${Annotation.restartedAt} ${VERB[first.op] ?? first.op}): containers restart only in a new pod`, path };
  return { reason: `${displayPath(path)} ${VERB[first.op] ?? first.op}: only images, labels, annotations and container cpu/memory change in place`, path };
}

/** A merge patch turning map `a` into map `b`. */
function mapPatch(a: Record<string, string> | undefined, b: Record<string, string> | undefined): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(b ?? {})) if (a?.[k] !== v) out[k] = v;
  for (const k of Object.keys(a ?? {})) if (!(k in (b ?? {}))) out[k] = null;
  return out;
}

/** A cpu/memory request or limit the old container has and the new one drops: a resize cannot unset it. */
function removedQuantity(old: ResourceRequirements | undefined, next: ResourceRequirements | undefined): string | undefined {
  const [oldRequests, nextRequests] = [effectiveRequests(old), effectiveRequests(next)];
  for (const r of RESIZABLE) {
    if (oldRequests[r] !== undefined && nextRequests[r] === undefined) return `requests/${r}`;
    if (old?.limits?.[r] !== undefined && next?.limits?.[r] === undefined) return `limits/${r}`;
  }
  return undefined;
}

type ResourcesResult = { ok: true; resources: InPlacePlan['resources'] } | { ok: false; reason: string; path: string };

function resourceChanges(old: TemplateLike, next: TemplateLike): ResourcesResult {
  const olds = containersOf(old, 'containers');
  const resources: InPlacePlan['resources'] = [];
  for (const [i, c] of containersOf(next, 'containers').entries()) {
    const before = olds[i]?.resources;
    if (sameResizable(before, c.resources)) continue;
    const removed = removedQuantity(before, c.resources);
    if (removed)
      return {
        ok: false,
        reason: `spec.containers[${i}].resources.${removed.replace('/', '.')} removed: a resize cannot unset a request or limit`,
        path: `/spec/containers/${i}/resources/${removed}`,
      };
    resources.push({ container: c.name, resources: resizableOf(c.resources) });
  }
  if (resources.length === 0) return { ok: true, resources };
  const [from, to] = [qosClass(old.spec), qosClass(next.spec)];
  if (from !== to) {
    const i = containersOf(next, 'containers').findIndex((c) => c.name === resources[0]?.container);
    return { ok: false, reason: `QoS class would change from ${from} to ${to}: a resize must keep it`, path: `/spec/containers/${i}/resources` };
  }
  return { ok: true, resources };
}

function imageChanges(old: TemplateLike, next: TemplateLike): InPlacePlan['images'] {
  const out: InPlacePlan['images'] = [];
  for (const list of LISTS) {
    const olds = containersOf(old, list);
    for (const [i, c] of containersOf(next, list).entries()) {
      if (olds[i]?.image !== c.image) out.push({ container: c.name, image: c.image, ...(list === 'initContainers' ? { init: true } : {}) });
    }
  }
  return out;
}

/**
 * Whether a pod of template `old` can become a pod of template `next` in place, and how. Not ok names the first
 * offending JSON path (sorted, so the answer is stable) and why.
 */
export function canUpdateInPlace(old: TemplateLike, next: TemplateLike, opts: DiffOptions): DiffResult {
  const offending = firstOffending(old, next, opts);
  if (offending) return { ok: false, ...offending };
  const res: ResourcesResult = opts.resizeSupported ? resourceChanges(old, next) : { ok: true, resources: [] };
  if (!res.ok) return res;
  return {
    ok: true,
    plan: {
      images: imageChanges(old, next),
      metadata: { labels: mapPatch(old.metadata?.labels, next.metadata?.labels), annotations: mapPatch(old.metadata?.annotations, next.metadata?.annotations) },
      resources: res.resources,
    },
  };
}
