/**
 * Pull-secret copies of one ImageList (src/api/pull-secret-copy.ts): the worker copies each Secret that an
 * entry names into the pull-secret namespace, where the node daemon reads it, and removes copies no entry
 * names any more, or whose Secret is gone or unusable. A copy keeps only the Secret's type and its registry
 * credentials, and is owned by the ImageList, so the garbage collector removes it with the ImageList.
 *
 * The admission policy `ebb-imagelist-pull-secrets` (deploy/rbac/imagelists.yaml) admits an entry naming a
 * Secret only when its writer may read that Secret, so the worker copies nothing its requester could not read.
 */
import { API_VERSION, IMAGE_LIST_KIND } from '../../api/group.ts';
import type { ImageList } from '../../api/image-list.ts';
import {
  copyLabelValue,
  PULL_SECRET_COPY_LABEL,
  PULL_SECRET_FIELD_MANAGER,
  PULL_SECRET_NODE_ANNOTATION,
  PULL_SECRET_SOURCE_ANNOTATION,
  PULL_SECRET_TYPES,
  pullSecretCopyName,
  sourceAnnotation,
  type SecretRef,
} from '../../api/pull-secret-copy.ts';
import { isKubeError } from '../../kube/errors.ts';
import { core } from '../../kube/paths.ts';
import type { ReconcileContext } from '../types.ts';

/** The part of a Secret a copy is made of. */
export interface SecretLike {
  metadata: { name: string; uid?: string | undefined; ownerReferences?: { uid: string }[] | undefined };
  type?: string | undefined;
  data?: Record<string, string> | undefined;
}

export type CopyAction = { kind: 'apply'; name: string; body: Record<string, unknown> } | { kind: 'delete'; name: string; uid: string | undefined };

export interface CopyInput {
  /** The ImageList (named after its node). */
  list: { name: string; uid: string };
  namespace: string;
  /** Each Secret the entries name, once. */
  named: readonly SecretRef[];
  /** The named Secrets as read, by `namespace/name`; absent: not found or not readable. */
  sources: ReadonlyMap<string, SecretLike>;
  /** The copies that exist for this ImageList. */
  copies: readonly SecretLike[];
}

/** The copy of `source`, or undefined when it holds no registry credentials of a pull-secret type. */
function copyOf(input: CopyInput, ref: SecretRef, source: SecretLike | undefined): Record<string, unknown> | undefined {
  const key = source?.type === undefined ? undefined : PULL_SECRET_TYPES[source.type];
  const value = key === undefined ? undefined : source?.data?.[key];
  if (key === undefined || value === undefined) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: pullSecretCopyName(input.list.name, ref),
      namespace: input.namespace,
      labels: { [PULL_SECRET_COPY_LABEL]: copyLabelValue(input.list.name) },
      annotations: { [PULL_SECRET_NODE_ANNOTATION]: input.list.name, [PULL_SECRET_SOURCE_ANNOTATION]: sourceAnnotation(ref) },
      ownerReferences: [{ apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, name: input.list.name, uid: input.list.uid }],
    },
    type: source?.type,
    data: { [key]: value },
  };
}

function upToDate(existing: SecretLike | undefined, body: Record<string, unknown>, listUid: string): boolean {
  if (!existing) return false;
  const data = body['data'] as Record<string, string>;
  const sameData = Object.keys(data).length === Object.keys(existing.data ?? {}).length && Object.entries(data).every(([k, v]) => existing.data?.[k] === v);
  return sameData && existing.type === body['type'] && (existing.metadata.ownerReferences ?? []).some((r) => r.uid === listUid);
}

/** What to write so that the copies match the entries: applies of new or changed copies, deletes of the rest. */
export function planCopies(input: CopyInput): CopyAction[] {
  const existing = new Map(input.copies.map((c) => [c.metadata.name, c]));
  const actions: CopyAction[] = [];
  const kept = new Set<string>();
  for (const ref of input.named) {
    const body = copyOf(input, ref, input.sources.get(sourceAnnotation(ref)));
    if (!body) continue;
    const name = pullSecretCopyName(input.list.name, ref);
    kept.add(name);
    if (!upToDate(existing.get(name), body, input.list.uid)) actions.push({ kind: 'apply', name, body });
  }
  for (const c of input.copies) if (!kept.has(c.metadata.name)) actions.push({ kind: 'delete', name: c.metadata.name, uid: c.metadata.uid });
  return actions;
}

/** Each Secret the entries of `list` name, once. */
export function namedSecrets(list: ImageList): SecretRef[] {
  const refs = new Map<string, SecretRef>();
  for (const e of list.spec?.images ?? []) if (e.pullSecret) refs.set(sourceAnnotation(e.pullSecret), e.pullSecret);
  return [...refs.values()];
}

async function readSource(ref: SecretRef, ctx: ReconcileContext): Promise<SecretLike | undefined> {
  try {
    return await ctx.rest.get<SecretLike>(core('secrets', ref.namespace, ref.name), ctx.signal);
  } catch (err) {
    // Gone, or not the worker's to read: no copy (and an earlier one is removed). The daemon reports it unusable.
    if (isKubeError(err, 'NotFound') || isKubeError(err, 'Forbidden')) return undefined;
    throw err;
  }
}

/** Brings the copies of the pull secrets of ImageList `name` in `namespace` up to date. */
export async function syncPullSecretCopies(name: string, list: ImageList, namespace: string, ctx: ReconcileContext): Promise<void> {
  const uid = list.metadata.uid;
  if (!uid) return;
  const named = namedSecrets(list);
  const sources = new Map<string, SecretLike>();
  for (const ref of named) {
    const source = await readSource(ref, ctx);
    if (source) sources.set(sourceAnnotation(ref), source);
  }
  const selector = `${PULL_SECRET_COPY_LABEL}=${copyLabelValue(name)}`;
  const copies = (await ctx.rest.list<SecretLike>(core('secrets', namespace), { labelSelector: selector }, ctx.signal)).items;
  const actions = planCopies({ list: { name, uid }, namespace, named, sources, copies });
  for (const a of actions) {
    if (a.kind === 'apply') await ctx.rest.apply(core('secrets', namespace, a.name), a.body, PULL_SECRET_FIELD_MANAGER, true, ctx.signal);
    else
      await ctx.rest.delete(core('secrets', namespace, a.name), { uid: a.uid }, ctx.signal).catch((err: unknown) => {
        if (!isKubeError(err, 'NotFound') && !isKubeError(err, 'Conflict')) throw err;
      });
  }
  if (actions.length > 0)
    ctx.log.info(
      { copied: actions.filter((a) => a.kind === 'apply').length, removed: actions.filter((a) => a.kind === 'delete').length },
      'pull-secret copies updated',
    );
}
