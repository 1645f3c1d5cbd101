/**
 * How the in-memory apiserver applies the pod writes of the in-place update, as the real one does: pods/status
 * strategic merge (annotations merged, null removes; conditions merged by type), the spec JSON patch (with
 * `replace /metadata/resourceVersion` as the optimistic-concurrency precondition), and pods/resize (container
 * resources merged by name).
 */
import fjp from 'fast-json-patch';
import { KubeError } from '../../kube/errors.ts';
import { conflict } from './fake-store.ts';
import type { Pod, PodCondition } from './kube-types.ts';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function applyStatusPatch(pod: Pod, body: unknown): Pod {
  const next = structuredClone(pod);
  const b = isObj(body) ? body : {};
  const meta = isObj(b.metadata) ? b.metadata : {};
  if (isObj(meta.annotations)) {
    const annotations = { ...(next.metadata.annotations ?? {}) };
    for (const [k, v] of Object.entries(meta.annotations)) {
      if (v === null) delete annotations[k];
      else annotations[k] = typeof v === 'string' ? v : JSON.stringify(v);
    }
    next.metadata.annotations = annotations;
  }
  const conditions = isObj(b.status) && Array.isArray(b.status.conditions) ? (b.status.conditions as PodCondition[]) : [];
  const list = [...(next.status?.conditions ?? [])];
  for (const c of conditions) {
    const i = list.findIndex((x) => x.type === c.type);
    if (i >= 0) list[i] = { ...list[i], ...c };
    else list.push(c);
  }
  next.status = { ...(next.status ?? {}), conditions: list };
  return next;
}

/** JSON patch; `replace /metadata/resourceVersion` with a value other than the stored one is 409 Conflict. */
export function applyJsonPatch(pod: Pod, body: unknown): Pod {
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

export function applyResizePatch(pod: Pod, body: unknown): Pod {
  const next = structuredClone(pod);
  const spec = isObj(body) && isObj(body.spec) ? body.spec : {};
  const containers = (next.spec?.['containers'] ?? []) as ContainerLike[];
  for (const c of (spec.containers ?? []) as ContainerLike[]) {
    const target = containers.find((x) => x.name === c.name);
    if (!target) throw new KubeError('Invalid', 422, `no container ${c.name}`, 'Invalid');
    const r = target.resources;
    target.resources = { ...r, requests: { ...r?.requests, ...c.resources?.requests }, limits: { ...r?.limits, ...c.resources?.limits } };
  }
  return next;
}
