/**
 * Events on the App (events.k8s.io/v1), named and worded like the upstream StatefulSet controller's: one per
 * pod or claim created or deleted, one per failure, and one per rollout completed.
 */
import { randomBytes } from 'node:crypto';
import type { App } from '../../../api/app.ts';
import type { Stored } from '../../../kube/types.ts';
import { API_VERSION, APP_KIND, GROUP } from '../../../api/group.ts';
import { EventReason } from '../../../api/keys.ts';
import type { AppStatus } from '../../../api/app-status.ts';
import type { Action, DeleteCause, EventSpec } from '../model/actions.ts';
import { microTime } from '../../shared/event-fields.ts';

const REPORTING_CONTROLLER = `${GROUP}/ebb`;
const NOTE_MAX = 1024;

export function eventObject(app: Stored<App>, spec: EventSpec, now: Date, instance: string): Record<string, unknown> {
  const ns = app.metadata.namespace;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    // As client-go names events: `<object>.<hex time>` (a generateName ending in '.' is rejected).
    metadata: { name: `${app.metadata.name ?? 'app'}.${now.getTime().toString(16)}${randomBytes(4).toString('hex')}`, namespace: ns },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: instance,
    action: spec.action,
    reason: spec.reason,
    type: spec.type,
    note: spec.message.slice(0, NOTE_MAX),
    regarding: {
      apiVersion: API_VERSION,
      kind: APP_KIND,
      name: app.metadata.name,
      namespace: ns,
      uid: app.metadata.uid,
      resourceVersion: app.metadata.resourceVersion,
    },
    ...(spec.related ? { related: { apiVersion: 'v1', kind: spec.related.kind, name: spec.related.name, namespace: ns, uid: spec.related.uid } } : {}),
  };
}

const appName = (app: Stored<App>): string => app.metadata.name;

const DELETE_WHY: Record<DeleteCause, string> = {
  condemned: 'scale down',
  failed: 'failed',
  update: 'update',
  reserved: 'reserved ordinal',
  specified: 'specified-delete label: recreated with the same identity',
};

/** The Event recorded after `action` succeeded, if it deserves one. */
export function successEvent(app: Stored<App>, action: Action): EventSpec | undefined {
  switch (action.kind) {
    case 'createPod':
      return {
        type: 'Normal',
        reason: EventReason.successfulCreate,
        action: 'Create',
        message: `create Pod ${action.pod.metadata.name} in App ${appName(app)} successful`,
        related: { kind: 'Pod', name: action.pod.metadata.name },
      };
    case 'createPvc':
      return {
        type: 'Normal',
        reason: EventReason.successfulCreate,
        action: 'Create',
        message: `create Claim ${action.pvc.metadata.name} for Pod ${appName(app)}-${action.ordinal} in App ${appName(app)} success`,
        related: { kind: 'PersistentVolumeClaim', name: action.pvc.metadata.name },
      };
    case 'deletePod': {
      const reason = action.cause === 'failed' ? EventReason.recreatingFailedPod : EventReason.successfulDelete;
      const message =
        action.cause === 'failed'
          ? `App ${appName(app)} is recreating failed Pod ${action.name}`
          : `delete Pod ${action.name} in App ${appName(app)} successful (${DELETE_WHY[action.cause]})`;
      return {
        type: action.cause === 'failed' ? 'Warning' : 'Normal',
        reason,
        action: 'Delete',
        message,
        related: { kind: 'Pod', name: action.name, uid: action.uid },
      };
    }
    case 'expandPvc':
      return {
        type: 'Normal',
        reason: EventReason.expandingClaim,
        action: 'Expand',
        message: `expand Claim ${action.name} from ${action.from ?? '(unset)'} to ${action.storage} before updating Pod ${action.pod} in App ${appName(app)}`,
        related: { kind: 'PersistentVolumeClaim', name: action.name },
      };
    default:
      return undefined;
  }
}

/** The Event recorded when `action` failed with `detail` (a KubeError message: no headers or bodies). */
export function failureEvent(app: Stored<App>, action: Action, detail: string): EventSpec | undefined {
  switch (action.kind) {
    case 'createPod':
      return {
        type: 'Warning',
        reason: EventReason.failedCreate,
        action: 'Create',
        message: `create Pod ${action.pod.metadata.name} in App ${appName(app)} failed: ${detail}`,
        related: { kind: 'Pod', name: action.pod.metadata.name },
      };
    case 'createRevision':
      return {
        type: 'Warning',
        reason: EventReason.failedCreate,
        action: 'Create',
        message: `create ControllerRevision ${action.revision.metadata.name} in App ${appName(app)} failed: ${detail}`,
      };
    case 'createPvc':
      return {
        type: 'Warning',
        reason: EventReason.failedCreate,
        action: 'Create',
        message: `create Claim ${action.pvc.metadata.name} in App ${appName(app)} failed: ${detail}`,
      };
    case 'deletePod':
      return {
        type: 'Warning',
        reason: action.cause === 'update' ? EventReason.failedUpdate : EventReason.failedDelete,
        action: 'Delete',
        message: `delete Pod ${action.name} in App ${appName(app)} failed: ${detail}`,
        related: { kind: 'Pod', name: action.name, uid: action.uid },
      };
    case 'expandPvc':
      return {
        type: 'Warning',
        reason: EventReason.claimExpansionRefused,
        action: 'Expand',
        message: `expand Claim ${action.name} to ${action.storage} in App ${appName(app)} failed: ${detail}; Pod ${action.pod} is not updated until it can grow`,
        related: { kind: 'PersistentVolumeClaim', name: action.name },
      };
    case 'inPlaceStep':
      return {
        type: 'Warning',
        reason: EventReason.failedUpdate,
        action: 'Update',
        message: `update Pod ${action.name} in place in App ${appName(app)} failed (${action.step.kind}): ${detail}`,
        related: { kind: 'Pod', name: action.name, uid: action.uid },
      };
    default:
      return undefined;
  }
}

/**
 * One Event when the App's current revision becomes its update revision with every wanted pod there (a rollout
 * ended; the current revision also moves while the first pods of a new App are created, which is no rollout).
 */
export function rolloutCompleteEvent(app: Stored<App>, status: AppStatus): EventSpec | undefined {
  const before = app.status?.currentRevision;
  const after = status.currentRevision;
  if (before === undefined || after === undefined || before === after || after !== status.updateRevision) return undefined;
  if (status.replicas !== (app.spec.replicas ?? 1)) return undefined;
  return {
    type: 'Normal',
    reason: EventReason.rolloutComplete,
    action: 'Update',
    message: `App ${appName(app)} rolled out revision ${after} to ${status.updatedReplicas ?? 0} pods (from ${before})`,
  };
}
