/**
 * `spec.lifecycle`: hooks that let another system (a traffic manager, a data-migration job) act on a pod
 * before ebb deletes it or updates it in place, and before a pod ebb created or updated counts as normal again.
 * A hook is pending on a pod while the pod carries any of its handlers (a label with the given value, a
 * finalizer); ebb waits until whoever owns the handlers has removed them all.
 */
import { Type, type Static } from '@sinclair/typebox';
import { labelKeysRule, LABEL_KEY_MAX_LENGTH, LABEL_VALUE_PATTERN, DNS_LABEL_MAX_LENGTH, stringMap, type CelRule } from './schema-kit.ts';

/** Handlers per hook: a pod carries at most this many labels or finalizers for one hook. */
export const MAX_HOOK_HANDLERS = 16;

/** A finalizer name: a qualified name (an optional DNS subdomain and `/`, then a name), as the apiserver wants it. */
const FINALIZER_PATTERN = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';

const handlersRule: CelRule = {
  rule: '(has(self.labelsHandler) && size(self.labelsHandler) > 0) || (has(self.finalizersHandler) && size(self.finalizersHandler) > 0)',
  message: 'a lifecycle hook needs at least one entry in labelsHandler or finalizersHandler',
};

const handlers = {
  labelsHandler: Type.Optional(
    stringMap(
      {
        description: 'Labels (key and value) whose presence on a pod holds the hook; ebb waits until none of them is on the pod any more.',
        maxProperties: MAX_HOOK_HANDLERS,
        'x-kubernetes-validations': [labelKeysRule],
      },
      Type.String({ maxLength: DNS_LABEL_MAX_LENGTH, pattern: LABEL_VALUE_PATTERN }),
    ),
  ),
  finalizersHandler: Type.Optional(
    Type.Array(Type.String({ maxLength: LABEL_KEY_MAX_LENGTH, pattern: FINALIZER_PATTERN }), {
      description: 'Finalizers whose presence on a pod holds the hook; ebb waits until none of them is on the pod any more.',
      maxItems: MAX_HOOK_HANDLERS,
      'x-kubernetes-list-type': 'set',
    }),
  ),
};

const markPodNotReady = Type.Optional(
  Type.Boolean({
    description:
      'Set pod condition apps.ebb.dev/lifecycle-ready to False when the pod enters the hook, before the wait (and back to True once the pod is back in service). List it in the template readinessGates to take the pod out of Service endpoints with it.',
    default: false,
  }),
);

export const LifecycleHookSchema = Type.Object(
  { ...handlers, markPodNotReady },
  { description: 'A lifecycle hook: the labels and finalizers that hold it.', 'x-kubernetes-validations': [handlersRule] },
);
export type LifecycleHook = Static<typeof LifecycleHookSchema>;

export const PreNormalHookSchema = Type.Object(handlers, {
  description: 'A hook ebb arms by putting its labels and finalizers on the pod (state PreparingNormal); the pod becomes Normal once they are all removed.',
  'x-kubernetes-validations': [handlersRule],
});

export const LifecycleSchema = Type.Object(
  {
    preDelete: Type.Optional(
      Type.Object(LifecycleHookSchema.properties, {
        description:
          'Before ebb deletes a pod that carries any of these handlers (scale-down, update by recreation, failed-pod replacement), it labels the pod PreparingDelete and waits until they are removed.',
        'x-kubernetes-validations': [handlersRule],
      }),
    ),
    inPlaceUpdate: Type.Optional(
      Type.Object(LifecycleHookSchema.properties, {
        description:
          'Before ebb updates a pod in place that carries any of these handlers, it labels the pod PreparingUpdate and waits until they are removed.',
        'x-kubernetes-validations': [handlersRule],
      }),
    ),
    preNormal: Type.Optional(PreNormalHookSchema),
  },
  {
    description:
      'Lifecycle hooks (state in pod label lifecycle.apps.ebb.dev/state): other systems act on a pod before ebb deletes it or updates it in place, and before it is Normal again. Without it pods carry no state label.',
  },
);
export type Lifecycle = Static<typeof LifecycleSchema>;
export type PreNormalHook = Static<typeof PreNormalHookSchema>;
