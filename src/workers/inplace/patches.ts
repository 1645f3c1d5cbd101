/**
 * The request bodies of the in-place steps, built purely from the pod as read and the step. Every write carries
 * the pod's resourceVersion as a precondition, so a step computed from a stale read fails with 409 Conflict
 * instead of clobbering a newer state:
 * - pods/status strategic merge patches (start, finish, gate ready) put `metadata.resourceVersion` in the body;
 *   the status subresource also persists `metadata.annotations`, so the state annotation and the gate condition
 *   change in one write. Pod conditions merge by `type`, so the kubelet's conditions are kept.
 * - the spec JSON patch replaces `/metadata/resourceVersion` with the value read: a mismatch is 409 Conflict
 *   (a `test` operation would fail with 422 Invalid, which reads as a permanent error).
 */
import { Annotation, Label } from '../../api/keys.ts';
import type { InPlaceStep } from './step.ts';
import { findContainer } from './state.ts';
import type { Pod, PodCondition } from '../../kube/types.ts';

export type JsonPatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** Stable failures of building a write from the pod as read. */
export class InPlaceError extends Error {
  override readonly name = 'InPlaceError';
  readonly code: 'ContainerNotFound' | 'NoResourceVersion';
  constructor(code: InPlaceError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** RFC 6901 escaping of one JSON pointer segment. */
export const pointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function resourceVersion(pod: Pod): string {
  const rv = pod.metadata.resourceVersion;
  if (!rv) throw new InPlaceError('NoResourceVersion', `pod ${pod.metadata.name ?? ''} has no resourceVersion`);
  return rv;
}

/** pods/status body: the state annotation set (or removed, `null`), the restart baseline if given, and the gate condition. */
export function statusPatch(pod: Pod, annotation: string | null | undefined, condition: PodCondition, baseline?: string): unknown {
  const metadata: Record<string, unknown> = { resourceVersion: resourceVersion(pod) };
  const annotations: Record<string, string | null> = {};
  if (annotation !== undefined) annotations[Annotation.inPlaceUpdateState] = annotation;
  if (baseline !== undefined) annotations[Annotation.restartBaseline] = baseline;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { metadata, status: { conditions: [condition] } };
}

/** Ops setting `patch` onto map `field` (`labels` or `annotations`); the map is created when the pod has none. */
function mapOps(pod: Pod, field: 'labels' | 'annotations', patch: Record<string, string | null>): JsonPatchOp[] {
  const current = pod.metadata[field];
  const entries = Object.entries(patch).filter(([k, v]) => v !== null || current?.[k] !== undefined);
  if (entries.length === 0) return [];
  if (!current) {
    const value = Object.fromEntries(entries.filter((e): e is [string, string] => e[1] !== null));
    return [{ op: 'add', path: `/metadata/${field}`, value }];
  }
  return entries.map(([k, v]) =>
    v === null ? { op: 'remove', path: `/metadata/${field}/${pointer(k)}` } : { op: 'add', path: `/metadata/${field}/${pointer(k)}`, value: v },
  );
}

/** The JSON patch of a `patchSpec` step against `pod`. */
export function specPatch(pod: Pod, step: Extract<InPlaceStep, { kind: 'patchSpec' }>): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [{ op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion(pod) }];
  for (const { container, image } of step.images) {
    const c = findContainer(pod, container);
    if (!c) throw new InPlaceError('ContainerNotFound', `pod ${pod.metadata.name ?? ''} has no container ${container}`);
    ops.push({ op: 'replace', path: `/spec/${c.init ? 'initContainers' : 'containers'}/${c.index}/image`, value: image });
  }
  const labels =
    step.revisionLabel === undefined
      ? step.labels
      : { ...step.labels, [Label.revision]: step.revisionLabel, [Label.controllerRevisionHash]: step.revisionLabel };
  const annotations = step.annotation === undefined ? step.annotations : { ...step.annotations, [Annotation.inPlaceUpdateState]: step.annotation };
  return [...ops, ...mapOps(pod, 'labels', labels), ...mapOps(pod, 'annotations', annotations)];
}

/** pods/resize body: strategic merge by container name of the new cpu/memory requests and limits. */
export function resizePatch(pod: Pod, step: Extract<InPlaceStep, { kind: 'resize' }>): unknown {
  return {
    metadata: { resourceVersion: resourceVersion(pod) },
    spec: { containers: step.containers.map((c) => ({ name: c.name, resources: c.resources })) },
  };
}
