/**
 * Splits the residual of a request window (apiserver − kubelet − benchmark, see requests.ts) into what the
 * controller under test made, what kube-scheduler made, watch closes and background.
 *
 * - Scheduler: `POST pods/binding` (only the scheduler binds) and one `POST events.k8s.io/events` per binding
 *   (its `Scheduled` Event). A `PATCH events.k8s.io/events` is an Event series: in an ebb window ebb's (its
 *   worker correlates repeated Events into series and patches them; the scheduler patches a series only for a
 *   pod it fails to schedule again and again, which these benchmarks never have), in a StatefulSet window the
 *   scheduler's (upstream's statefulset controller records core/v1 Events). So in StatefulSet windows the
 *   events.k8s.io POSTs must equal the bindings, which checks the assumption on every run (reported as
 *   `schedulerEventsCheck`).
 * - Controller: the resources a StatefulSet-like controller reads and writes (pods except binding, claims,
 *   ControllerRevisions, the workload and its status, Events).
 * - Watch: a WATCH is counted when the stream closes, not per event, so it is not a per-pod cost.
 * - ebb's worker also reads each namespace's notification Secret when a rollout of it completes (none in the
 *   benchmarks: a NotFound), so in an ebb window a `GET secrets` is ebb's.
 * - Background: everything else (leases, nodes, service accounts: the control plane idling).
 */
import { add, type Counts } from './requests.ts';
import type { ControllerKind } from './workloads.ts';

export interface Attributed {
  controller: Counts;
  scheduler: Counts;
  watch: Counts;
  background: Counts;
  /** POST events.k8s.io/events minus bindings: 0 in StatefulSet windows if the scheduler assumption holds. */
  schedulerEventsCheck: number;
}

const CONTROLLER_RESOURCES = new Set([
  'pods',
  'persistentvolumeclaims',
  'apps/controllerrevisions',
  'apps/statefulsets',
  'apps.ebb.dev/apps',
  // Only ebb touches ImageLists: its worker (pre-warm entries, and their removal when an App is gone) and its
  // node daemon, whose requests then count as the controller's too (the benchmarks run no daemon).
  'apps.ebb.dev/imagelists',
  'events',
  'events.k8s.io/events',
]);

/** `PATCH pods/status` → { verb: 'PATCH', resource: 'pods', subresource: 'status' }. */
export function splitKey(key: string): { verb: string; resource: string; subresource: string } {
  const [verb = '', path = ''] = key.split(' ');
  const parts = path.split('/');
  // group/resource[/sub] or resource[/sub]: a group has a dot or is `apps`.
  const grouped = parts.length >= 2 && (parts[0]!.includes('.') || parts[0] === 'apps');
  const resource = grouped ? `${parts[0]}/${parts[1]}` : parts[0]!;
  const subresource = (grouped ? parts[2] : parts[1]) ?? '';
  return { verb, resource, subresource };
}

const BINDINGS = 'POST pods/binding';
const SCHEDULER_EVENTS = 'POST events.k8s.io/events';
const SCHEDULER_EVENT_SERIES = 'PATCH events.k8s.io/events';

/** Requests of these keys are the controller's in an ebb window (above), another component's otherwise. */
const EBB_ONLY = new Set([SCHEDULER_EVENT_SERIES, 'GET secrets']);

/** Splits `residual`, a window in which `controller` ran the workloads. */
export function attribute(residual: Counts, controller: ControllerKind): Attributed {
  const out: Attributed = { controller: new Map(), scheduler: new Map(), watch: new Map(), background: new Map(), schedulerEventsCheck: 0 };
  const bindings = residual.get(BINDINGS) ?? 0;
  for (const [key, n] of residual) {
    const { verb, resource, subresource } = splitKey(key);
    if (verb === 'WATCH') add(out.watch, key, n);
    else if (controller === 'ebb' && EBB_ONLY.has(key)) add(out.controller, key, n);
    else if (key === BINDINGS || key === SCHEDULER_EVENT_SERIES) add(out.scheduler, key, n);
    else if (key === SCHEDULER_EVENTS) {
      const scheduler = Math.min(n, bindings);
      add(out.scheduler, key, scheduler);
      if (n - scheduler !== 0) add(out.controller, key, n - scheduler);
      out.schedulerEventsCheck = n - bindings;
    } else if (CONTROLLER_RESOURCES.has(resource) && subresource !== 'binding') add(out.controller, key, n);
    else add(out.background, key, n);
  }
  return out;
}

export function isWrite(key: string): boolean {
  const verb = splitKey(key).verb;
  return verb !== 'GET' && verb !== 'LIST' && verb !== 'WATCH';
}
