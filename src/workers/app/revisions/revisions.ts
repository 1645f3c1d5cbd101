/**
 * `revisions/` owns the App's ControllerRevisions: naming and reuse (this file) and which ones a plan works from
 * and keeps (`history.ts`).
 *
 * ControllerRevisions of an App (upstream history.go and getStatefulSetRevisions): the template captured as
 * revision data, named `<app>-<hash>` where the hash covers the data and the collision count; an equal
 * earlier revision is reused (renumbered) on rollback; old revisions beyond revisionHistoryLimit are deleted.
 */
import { RolloutAnnotation } from '../../../api/rollout-abort.ts';
import { canonicalJson } from '../../../common/canonical-json.ts';
import type { App } from '../../../api/app.ts';
import { Label } from '../../../api/keys.ts';
import { VolumeClaimUpdateType } from '../../../api/volume-claim-update.ts';
import { fnv1a32 } from '../../../common/hash.ts';
import type { PodTemplateSpec } from '../../../api/pod-template.ts';
import type { Action } from '../model/actions.ts';
import type { ControllerRevision, Named, Stored } from '../../../kube/types.ts';
import { appControllerRef } from '../model/owner-refs.ts';
import { rolloutSettings } from '../model/rollout-settings.ts';
import { isRecord } from '../../../common/guards.ts';
import { applyDefaults } from '../../../api/schema-defaults.ts';
import { upstreamSchemas } from '../../../api/pod-template-crd.ts';
import { controllerRef, isControlledBy } from '../pods/predicates.ts';
import { revisionClaims, type ClaimStorage } from './claim-storage.ts';

/** Label with the bare hash on every revision, as upstream's controller.kubernetes.io/hash. */
const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';

interface RevisionData {
  /** `volumeClaimTemplates`: the claims' storage requests, under volumeClaimUpdateStrategy OnPodRollingUpdate only. */
  spec: { template: PodTemplateSpec; volumeClaimTemplates?: ClaimStorage[] };
}

/** Letters and digits without vowels and look-alikes, so hashes never spell words (upstream SafeEncodeString). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function safeEncode(text: string): string {
  let out = '';
  for (const ch of text) out += SAFE_ALPHABET[(ch.codePointAt(0) ?? 0) % SAFE_ALPHABET.length];
  return out;
}

export function revisionHash(data: RevisionData, collisionCount: number): string {
  return safeEncode(String(fnv1a32(canonicalJson(data) + String(collisionCount))));
}

export function revisionData(app: Stored<App>): RevisionData {
  return { spec: { template: structuredClone(app.spec.template), ...revisionClaims(app) } };
}

export function templateOf(revision: ControllerRevision): PodTemplateSpec | undefined {
  const data = revision.data as Partial<RevisionData> | undefined;
  return data?.spec?.template;
}

export function equalRevisionData(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Whether stored revision data `stored` holds the template `data` holds, counting the pod template schema's
 * defaults: a revision made before a default existed (e.g. ports without `protocol`, captured before the
 * schema carried core/v1's defaults) still matches the template the apiserver now returns defaulted, so an
 * upgrade of the CRD does not roll every App.
 */
export function sameTemplate(stored: unknown, data: RevisionData): boolean {
  if (equalRevisionData(stored, data)) return true;
  const spec = isRecord(stored) && isRecord(stored['spec']) ? stored['spec'] : undefined;
  if (spec?.['template'] === undefined) return false;
  return equalRevisionData({ spec: { ...spec, template: applyDefaults(upstreamSchemas().podTemplateSpec, spec['template']) } }, data);
}

/** Ascending by revision number, then by name for a stable order. */
export function sortRevisions<R extends Named<ControllerRevision>>(revisions: readonly R[]): R[] {
  return [...revisions].sort((a, b) => a.revision - b.revision || a.metadata.name.localeCompare(b.metadata.name));
}

export function newRevision(app: Stored<App>, data: RevisionData, revision: number, collisionCount: number): Named<ControllerRevision> {
  const appName = app.metadata.name;
  const hash = revisionHash(data, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${appName}-${hash}`,
      namespace: app.metadata.namespace,
      labels: { ...(app.spec.template.metadata?.labels ?? {}), [Label.app]: appName, [REVISION_HASH_LABEL]: hash },
      ownerReferences: [appControllerRef(app)],
    },
    data,
    revision,
  };
}

export interface ResolvedRevisions {
  /** The App's own revisions as listed (before this plan's changes), oldest first. */
  owned: Stored<ControllerRevision>[];
  /** Stored, or (a new App, or the update revision just created) built by this plan. */
  current: Named<ControllerRevision>;
  update: Named<ControllerRevision>;
  collisionCount: number;
  actions: Action[];
}

/** A free name for `data`: bump the collision count past names taken by revisions with other data. */
function unusedName(
  app: Stored<App>,
  data: RevisionData,
  listed: readonly Stored<ControllerRevision>[],
  start: number,
): { collisionCount: number; taken?: Stored<ControllerRevision> } {
  let collisionCount = start;
  for (;;) {
    const name = `${app.metadata.name}-${revisionHash(data, collisionCount)}`;
    const taken = listed.find((r) => r.metadata.name === name);
    if (!taken) return { collisionCount };
    // Only an orphan with our data may be taken over; anything else is a collision.
    if (equalRevisionData(taken.data, data) && !controllerRef(taken.metadata)) return { collisionCount, taken };
    collisionCount++;
  }
}

/** The update revision: the newest equal revision (renumbered when it is not the newest), or a new one. */
function resolveUpdate(
  app: Stored<App>,
  owned: Stored<ControllerRevision>[],
  listed: readonly Stored<ControllerRevision>[],
): Omit<ResolvedRevisions, 'current' | 'owned'> {
  const data = revisionData(app);
  const next = (owned.at(-1)?.revision ?? 0) + 1;
  const startCount = app.status?.collisionCount ?? 0;
  const equal = owned.filter((r) => sameTemplate(r.data, data));
  const newestEqual = equal.at(-1);
  if (newestEqual && newestEqual === owned.at(-1)) return { update: newestEqual, collisionCount: startCount, actions: [] };
  if (newestEqual) {
    const renumbered = { ...newestEqual, revision: next };
    const action: Action = { kind: 'renumberRevision', name: newestEqual.metadata.name, resourceVersion: newestEqual.metadata.resourceVersion, revision: next };
    return { update: renumbered, collisionCount: startCount, actions: [action] };
  }
  const { collisionCount, taken } = unusedName(app, data, listed, startCount);
  if (taken) {
    // An orphaned revision with our data (e.g. the App was deleted with orphan propagation and recreated): adopt it.
    const ownerReferences = [...(taken.metadata.ownerReferences ?? []).filter((r) => r.controller !== true), appControllerRef(app)];
    const adopted = { ...taken, revision: next, metadata: { ...taken.metadata, ownerReferences } };
    return {
      update: adopted,
      collisionCount,
      actions: [{ kind: 'adoptRevision', name: taken.metadata.name, resourceVersion: taken.metadata.resourceVersion, ownerReferences, revision: next }],
    };
  }
  const created = newRevision(app, data, next, collisionCount);
  return { update: created, collisionCount, actions: [{ kind: 'createRevision', revision: created }] };
}

/**
 * Current and update revisions of `app`. `listed` are the revisions matching the App's selector; only those it
 * controls count as its history. The current revision is status.currentRevision when it still exists,
 * otherwise the update revision (a new App, or history lost).
 */
export function resolveRevisions(app: Stored<App>, listed: readonly Stored<ControllerRevision>[]): ResolvedRevisions {
  const owned = sortRevisions(listed.filter((r) => isControlledBy(r.metadata, app.metadata.uid)));
  const resolved = resolveUpdate(app, owned, listed);
  const currentName = app.status?.currentRevision;
  const current = owned.find((r) => r.metadata.name === currentName && r.metadata.name !== resolved.update.metadata.name) ?? resolved.update;
  return { ...resolved, owned, current };
}

/**
 * Deletes the oldest revisions that no pod uses and that are neither current nor update, keeping at most
 * `limit` of them (upstream truncateHistory).
 */
export function truncateHistory(owned: readonly Stored<ControllerRevision>[], live: ReadonlySet<string>, limit: number): Action[] {
  const history = sortRevisions(owned).filter((r) => !live.has(r.metadata.name));
  if (limit < 0 || history.length <= limit) return [];
  return history.slice(0, history.length - limit).map((r) => ({ kind: 'deleteRevision', name: r.metadata.name, uid: r.metadata.uid }));
}

/** An abort (requested, recorded, or one the deadline may start) sends pods back to the current revision. */
function mayAbort(app: Stored<App>): boolean {
  if (app.status?.abort !== undefined || app.metadata.annotations?.[RolloutAnnotation.abort] !== undefined) return true;
  return rolloutSettings(app).rollbackOnProgressDeadline;
}

/**
 * Whether a plan may read the current revision's template: pods created below a partition, diffed for in
 * place, compared with the update revision to tell a claims-only revision (volume growth relabels those pods), or
 * the target of an aborted rollout.
 */
function currentTemplateMayBeRead(app: Stored<App>): boolean {
  const settings = rolloutSettings(app);
  if (app.spec.volumeClaimUpdateStrategy?.type === VolumeClaimUpdateType.onPodRollingUpdate) return true;
  if (mayAbort(app)) return true;
  return (settings.podUpdatePolicy ?? 'ReCreate') !== 'ReCreate' || settings.partition !== 0 || settings.canarySteps.length > 0;
}

/**
 * The revisions a plan needs, from the App alone (no LIST), or undefined when they cannot be: the status
 * describes this generation, names as update revision the one this template hashes to (with the status's
 * collision count, so that revision exists and holds this template), and no plan can need the current
 * revision's template: either it is the update revision, or nothing is created from it (RollingUpdate or
 * OnDelete without partition and canary, so every new pod is at the update revision) and no pod is diffed
 * against it (pod update policy ReCreate). History is not truncated from this (`owned` is empty); the planner
 * reads the revisions when the current revision moves (`Plan.needsRevisions`).
 */
export function derivedRevisions(app: Stored<App>): ResolvedRevisions | undefined {
  const status = app.status;
  const updateName = status?.updateRevision;
  const currentName = status?.currentRevision;
  if (!status || status.observedGeneration !== app.metadata.generation || !updateName || !currentName) return undefined;
  const data = revisionData(app);
  const collisionCount = status.collisionCount ?? 0;
  if (updateName !== `${app.metadata.name}-${revisionHash(data, collisionCount)}`) return undefined;
  if (currentName !== updateName && currentTemplateMayBeRead(app)) return undefined;
  const named = (name: string, revisionData: unknown): Named<ControllerRevision> => ({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name, namespace: app.metadata.namespace },
    data: revisionData,
    revision: 0,
  });
  const update = named(updateName, data);
  return { owned: [], update, current: currentName === updateName ? update : named(currentName, undefined), collisionCount, actions: [] };
}
