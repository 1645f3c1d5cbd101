/**
 * How the in-memory apiserver applies pod writes (the in-place update's and the kubelet's), as the real one
 * does: pods/status strategic merge (labels and annotations merged, null removes; finalizers added; conditions merged by type, `$patch:
 * delete` drops one; other status fields replaced, lists included; a `metadata.uid` precondition), the spec JSON
 * patch (with `replace /metadata/resourceVersion` as the optimistic-concurrency precondition), and pods/resize
 * (container resources merged by name).
 */
import fjp from 'fast-json-patch';
import { isRecord } from '../../src/common/guards.ts';
import { KubeError } from '../../src/kube/errors.ts';
import { conflict } from './store.ts';
import type { Pod, PodCondition } from '../../src/kube/types.ts';

type Json = Record<string, unknown>;

export function applyStatusPatch<P extends Pod>(pod: P, body: unknown): P {
  const next = structuredClone(pod);
  const b = isRecord(body) ? body : {};
  const meta = isRecord(b.metadata) ? b.metadata : {};
  checkUid(pod, meta.uid);
  if (isRecord(meta.annotations)) next.metadata.annotations = mergeStrings(next.metadata.annotations, meta.annotations);
  if (isRecord(meta.labels)) next.metadata.labels = mergeStrings(next.metadata.labels, meta.labels);
  // Finalizers merge (their patch strategy): the patch's entries are added to the pod's list.
  if (Array.isArray(meta.finalizers)) {
    const add = meta.finalizers.filter((f): f is string => typeof f === 'string');
    next.metadata.finalizers = [...new Set([...(next.metadata.finalizers ?? []), ...add])];
  }
  const { conditions, ...fields } = isRecord(b.status) ? b.status : {};
  const list = mergeConditions(next.status?.conditions ?? [], Array.isArray(conditions) ? (conditions as Json[]) : []);
  next.status = { ...setFields(next.status ?? {}, fields), conditions: list };
  return next;
}

/** A string map merged with `patch`: null removes a key, other values are set (non-strings as JSON). */
function mergeStrings(current: Record<string, string> | undefined, patch: Json): Record<string, string> {
  const out = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

/** The `metadata.uid` precondition a status patch may carry (the kubelet's always does). */
function checkUid(pod: Pod, uid: unknown): void {
  if (uid !== undefined && uid !== pod.metadata.uid) throw conflict(`Pod ${pod.metadata.name ?? ''} (UID precondition)`);
}

/** Sets the keys of `patch` on `target`; a null value removes the key. */
function setFields(target: Json, patch: Json): Json {
  const out = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = structuredClone(v);
  }
  return out;
}

/** Conditions merge by type (their patchMergeKey); `$patch: delete` removes the condition of that type. */
function mergeConditions(list: PodCondition[], patch: Json[]): PodCondition[] {
  const out = [...list];
  for (const { $patch, ...c } of patch) {
    const i = out.findIndex((x) => x.type === c.type);
    if ($patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) out[i] = setFields(out[i] as unknown as Json, c) as unknown as PodCondition;
    else out.push(setFields({}, c) as unknown as PodCondition);
  }
  return out;
}

/** JSON patch; `replace /metadata/resourceVersion` with a value other than the stored one is 409 Conflict. */
export function applyJsonPatch<P extends Pod>(pod: P, body: unknown): P {
  const next = structuredClone(pod);
  for (const op of (Array.isArray(body) ? body : []) as fjp.Operation[]) {
    if (op.path === '/metadata/resourceVersion') {
      if ((op as { value?: unknown }).value !== pod.metadata.resourceVersion) throw conflict(`Pod ${pod.metadata.name ?? ''}`);
      continue;
    }
    try {
      fjp.applyOperation(next, op, true, true);
    } catch {
      throw new KubeError('Invalid', 422, `cannot apply ${op.op} ${op.path}`, 'Invalid');
    }
  }
  return next;
}

interface ContainerLike {
  name: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

export function applyResizePatch<P extends Pod>(pod: P, body: unknown): P {
  const next = structuredClone(pod);
  const spec = isRecord(body) && isRecord(body.spec) ? body.spec : {};
  const containers = (next.spec?.['containers'] ?? []) as ContainerLike[];
  for (const c of (spec.containers ?? []) as ContainerLike[]) {
    const target = containers.find((x) => x.name === c.name);
    if (!target) throw new KubeError('Invalid', 422, `no container ${c.name}`, 'Invalid');
    const r = target.resources;
    target.resources = { ...r, requests: { ...r?.requests, ...c.resources?.requests }, limits: { ...r?.limits, ...c.resources?.limits } };
  }
  return next;
}
