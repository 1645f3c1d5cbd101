/**
 * The App's status for one plan, assembled in one place (pure): each part of the plan contributes once, in a
 * fixed order (`STATUS_ORDER`), whatever order they are handed in. The first part, the replicas, makes the
 * counts and the conditions they decide; each later one adds its own fields and conditions to what the earlier
 * ones made. One assembly serves three views:
 *
 * - planned: the status once every action succeeded (pods counted as the plan's writes leave them);
 * - as read: nothing acted (pods counted as read, pre-warm as the App's status said it);
 * - after failure: as read (`asReadOf`), plus what the failed action left (`after-failure.ts`).
 */
import type { AppStatus } from '../../../api/app-status.ts';

/** Which status is assembled: after every action (`planned`), or before any (`asRead`). */
export type StatusView = 'planned' | 'asRead';

/** The parts of a status, in the order they are applied. */
export const STATUS_ORDER = ['replicas', 'prewarm', 'rolloutHeld', 'expansion', 'guards', 'abort', 'analysis', 'lifecycle'] as const;
export type StatusPart = (typeof STATUS_ORDER)[number];

/** One part's contribution: the status so far, in `view`, with this part's fields and conditions. */
export interface StatusContribution {
  part: StatusPart;
  apply(status: AppStatus, view: StatusView): AppStatus;
}

/** The statuses a plan carries: the planned one, and the one as read (made only when a write fails). */
export interface StatusViews {
  status: AppStatus;
  statusAsRead: () => AppStatus;
}

const rank = (c: StatusContribution): number => STATUS_ORDER.indexOf(c.part);

/** The status in `view`: every contribution once, in `STATUS_ORDER`. */
export function assembleStatus(contributions: readonly StatusContribution[], view: StatusView): AppStatus {
  const parts = new Set(contributions.map((c) => c.part));
  if (parts.size !== contributions.length) throw new Error('internal: a status part contributed twice');
  return [...contributions].sort((a, b) => rank(a) - rank(b)).reduce<AppStatus>((status, c) => c.apply(status, view), {});
}

/** The planned status now, the one as read on demand. */
export function statusViews(contributions: readonly StatusContribution[]): StatusViews {
  return { status: assembleStatus(contributions, 'planned'), statusAsRead: () => assembleStatus(contributions, 'asRead') };
}

/** The status a plan reads as: as read, or when it has no such view, as planned. */
export const asReadOf = (plan: { status: AppStatus; statusAsRead?: (() => AppStatus) | undefined }): AppStatus => plan.statusAsRead?.() ?? plan.status;
