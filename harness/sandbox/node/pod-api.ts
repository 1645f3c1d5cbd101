/**
 * The side effects of the simulated kubelet on pods, behind narrow interfaces with a real implementation on
 * KubeRest: post status, delete after termination, read pods and PVCs, record Events.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../src/common/log.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';
import type { Pod, Stored } from '../../../src/kube/types.ts';
import { rfc3339 } from './k8s.ts';
import type { StatusPatch } from './status-patch.ts';
import { errorMessage } from '../../../src/common/errors.ts';

/** How long a status patch may take before it is abandoned and retried. */
const STATUS_TIMEOUT_MS = 30_000;

export interface PodApi {
  /** Patches pods/status; returns the pod's new resourceVersion. */
  patchStatus(pod: Stored<Pod>, patch: StatusPatch, signal: AbortSignal): Promise<string | undefined>;
  /** Deletes the pod at once (gracePeriodSeconds=0) if it still has this UID; a pod already gone is fine. */
  deletePod(pod: Stored<Pod>, signal: AbortSignal): Promise<void>;
  getPod(namespace: string, name: string, signal: AbortSignal): Promise<Stored<Pod> | undefined>;
  /** The PVC's phase, or undefined when it does not exist. */
  claimPhase(namespace: string, name: string, signal: AbortSignal): Promise<string | undefined>;
}

export interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** `spec.containers{name}` or `spec.initContainers{name}`. */
  fieldPath?: string;
}

export interface EventSink {
  record(pod: Stored<Pod>, event: PodEvent): void;
}

export function restPodApi(rest: KubeRest): PodApi {
  return {
    async patchStatus(pod, patch, signal) {
      // A bounded wait: a request lost under load must fail and be retried, not stall the pod for good.
      const bounded = AbortSignal.any([signal, AbortSignal.timeout(STATUS_TIMEOUT_MS)]);
      const res = await rest.patch<Stored<Pod>>(core('pods', pod.metadata.namespace, pod.metadata.name, 'status'), patch, PatchType.strategic, {}, bounded);
      return res.metadata.resourceVersion;
    },
    async deletePod(pod, signal) {
      try {
        await rest.delete(core('pods', pod.metadata.namespace, pod.metadata.name), { uid: pod.metadata.uid, gracePeriodSeconds: 0 }, signal);
      } catch (err) {
        // NotFound: already gone; Conflict: the UID precondition failed, a new pod took the name.
        if (!isKubeError(err, 'NotFound', 'Conflict')) throw err;
      }
    },
    async getPod(namespace, name, signal) {
      try {
        return await rest.get<Stored<Pod>>(core('pods', namespace, name), signal);
      } catch (err) {
        if (isKubeError(err, 'NotFound')) return undefined;
        throw err;
      }
    },
    async claimPhase(namespace, name, signal) {
      try {
        const pvc = await rest.get<{ status?: { phase?: string } }>(core('persistentvolumeclaims', namespace, name), signal);
        return pvc.status?.phase ?? 'Pending';
      } catch (err) {
        if (isKubeError(err, 'NotFound')) return undefined;
        throw err;
      }
    },
  };
}

/**
 * Repeats of a Warning or BackOff event (pull failures and back-offs recur every few hundred ms with fast
 * timings) within this window are dropped, where the kubelet's event correlator would bump a count instead.
 */
const DEDUPE_MS = 10_000;

function isRepetitive(e: PodEvent): boolean {
  return e.type === 'Warning' || e.reason === 'BackOff';
}

/** Records kubelet Events (source component `kubelet`, host = node); failures are logged, never thrown. */
export function restEventSink(rest: KubeRest, node: string, log: Logger, now: () => number = Date.now): EventSink {
  const recent = new Map<string, number>();
  return {
    record(pod, e) {
      const t = now();
      const key = `${pod.metadata.uid}|${e.fieldPath ?? ''}|${e.reason}|${e.message}`;
      if (isRepetitive(e)) {
        const last = recent.get(key);
        if (last !== undefined && t - last < DEDUPE_MS) return;
        recent.set(key, t);
        if (recent.size > 5_000) for (const [k, at] of recent) if (t - at >= DEDUPE_MS) recent.delete(k);
      }
      const ns = pod.metadata.namespace ?? 'default';
      const body = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${pod.metadata.name}.${t.toString(16)}${randomBytes(3).toString('hex')}`, namespace: ns },
        involvedObject: {
          apiVersion: 'v1',
          kind: 'Pod',
          name: pod.metadata.name,
          namespace: ns,
          uid: pod.metadata.uid,
          ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
        },
        reason: e.reason,
        message: e.message,
        type: e.type,
        source: { component: 'kubelet', host: node },
        reportingComponent: 'kubelet',
        reportingInstance: node,
        firstTimestamp: rfc3339(t),
        lastTimestamp: rfc3339(t),
        count: 1,
      };
      rest.create(core('events', ns), body).catch((err: unknown) => {
        log.debug({ pod: pod.metadata.name, reason: e.reason, error: errorMessage(err) }, 'could not record event');
      });
    },
  };
}

/** Records nothing (events disabled). */
export const noEvents: EventSink = { record: () => undefined };
