/**
 * `spec.volumeClaimUpdateStrategy` and what may change in `spec.volumeClaimTemplates` after creation: only a
 * template's storage request, and only upwards. `OnPodRollingUpdate` grows each pod's existing claims during
 * the rolling update, pod by pod; `OnDelete` (the default) leaves existing claims alone, so a larger request
 * reaches only claims created afterwards (a new ordinal, or a claim deleted together with its pod).
 */
import { Type, type Static } from '@sinclair/typebox';
import { stringEnum, type CelRule } from './schema-kit.ts';

export const VolumeClaimUpdateType = { onDelete: 'OnDelete', onPodRollingUpdate: 'OnPodRollingUpdate' } as const;

export const VolumeClaimUpdateStrategySchema = Type.Object(
  {
    type: Type.Optional(
      stringEnum([VolumeClaimUpdateType.onDelete, VolumeClaimUpdateType.onPodRollingUpdate], {
        description:
          'OnDelete: a larger storage request in volumeClaimTemplates applies only to claims created afterwards. OnPodRollingUpdate: the rolling update expands each pod’s existing claims (when their StorageClass allows expansion) and updates the pod once the claims report the new capacity.',
        default: VolumeClaimUpdateType.onDelete,
      }),
    ),
  },
  // Not defaulted as an object: an App without it reads as before (OnDelete).
  { description: 'How existing claims follow a larger storage request in volumeClaimTemplates (OnDelete when unset).' },
);
export type VolumeClaimUpdateStrategy = Static<typeof VolumeClaimUpdateStrategySchema>;

/** Whether existing claims are grown during the rolling update. */
export function growsClaimsOnRollingUpdate(strategy: VolumeClaimUpdateStrategy | undefined): boolean {
  return strategy?.type === VolumeClaimUpdateType.onPodRollingUpdate;
}

/** The claim spec fields other than `resources` (core/v1 PersistentVolumeClaimSpec); a unit test checks them against the upstream schema. */
export const CLAIM_SPEC_FIELDS_BUT_RESOURCES = [
  'accessModes',
  'dataSource',
  'dataSourceRef',
  'selector',
  'storageClassName',
  'volumeAttributesClassName',
  'volumeMode',
  'volumeName',
] as const;
/** The claim template's top-level fields other than `spec` (a unit test checks them against the upstream schema). */
export const CLAIM_FIELDS_BUT_SPEC = ['apiVersion', 'kind', 'metadata', 'status'] as const;

/**
 * `a.path` and `b.path` are both unset, or both set and equal. The values are compared wrapped in lists: the
 * apiserver's cost estimate prices a list comparison at a constant, but a string comparison by the longest
 * string the field could hold, which for unbounded upstream strings would exceed the rule budget.
 */
const sameField = (a: string, b: string, path: string): string =>
  `(has(${a}.${path}) ? has(${b}.${path}) && [${a}.${path}] == [${b}.${path}] : !has(${b}.${path}))`;

const requests = (x: string): string => `${x}.spec.resources.requests`;
const hasRequests = (x: string): string => `(has(${x}.spec.resources) && has(${requests(x)}))`;

/** Every request of `a` other than storage is in `b` with the same value. */
const otherRequestsIn = (a: string, b: string): string =>
  `(!${hasRequests(a)} || ${requests(a)}.all(k, k == 'storage' || (${hasRequests(b)} && k in ${requests(b)} && [${requests(b)}[k]] == [${requests(a)}[k]])))`;

/** The template's storage request as a quantity (0 when unset). */
const storage = (x: string): string => `(${hasRequests(x)} && 'storage' in ${requests(x)} ? quantity(string(${requests(x)}['storage'])) : quantity('0'))`;

/** Template `t` equals its earlier version `o` except for the storage request. */
function sameButStorage(t: string, o: string): string {
  const parts = [
    ...CLAIM_FIELDS_BUT_SPEC.map((f) => sameField(t, o, f)),
    ...CLAIM_SPEC_FIELDS_BUT_RESOURCES.map((f) => sameField(t, o, `spec.${f}`)),
    `(has(${t}.spec.resources) && has(${t}.spec.resources.limits) ? has(${o}.spec.resources) && has(${o}.spec.resources.limits) && [${t}.spec.resources.limits] == [${o}.spec.resources.limits] : !(has(${o}.spec.resources) && has(${o}.spec.resources.limits)))`,
    otherRequestsIn(t, o),
    otherRequestsIn(o, t),
  ];
  return parts.join(' && ');
}

/** For each template `t`, the earlier template of the same name `o` (if any) satisfies `cond`. */
const againstEarlier = (cond: string): string => `self.all(t, oldSelf.all(o, o.metadata.name != t.metadata.name || (${cond})))`;

/** Transition rules on `spec.volumeClaimTemplates` (when it is set before and after; its presence is checked on the spec). */
export function volumeClaimTemplateUpdateRules(): CelRule[] {
  return [
    {
      rule: 'self.map(t, t.metadata.name) == oldSelf.map(t, t.metadata.name)',
      message:
        'volumeClaimTemplates is immutable but for a storage request that grows: templates cannot be added, removed, renamed or reordered (the claims of existing pods are named after them)',
    },
    {
      rule: againstEarlier(sameButStorage('t', 'o')),
      message: 'volumeClaimTemplates is immutable but for a storage request that grows: only spec.resources.requests.storage of a claim template may change',
    },
    {
      rule: againstEarlier(`${storage('t')}.compareTo(${storage('o')}) >= 0`),
      message:
        'the storage request of a volumeClaimTemplate cannot shrink: a volume can only grow (to use smaller volumes, create a new App and move the data); volumeClaimTemplates is immutable otherwise',
    },
  ];
}

/** The most resources a claim template may request, and the longest quantity: bounds the rules' cost. */
export const MAX_CLAIM_REQUESTS = 8;
export const MAX_QUANTITY_LENGTH = 64;

/** `volumeClaimTemplates` is present after an update exactly when it was before. */
export const volumeClaimTemplatesPresenceRule: CelRule = {
  rule: 'has(self.volumeClaimTemplates) == has(oldSelf.volumeClaimTemplates)',
  message: 'volumeClaimTemplates is immutable: it cannot be added or removed after creation',
  fieldPath: '.volumeClaimTemplates',
};
