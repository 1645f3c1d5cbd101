/**
 * Rollout notifications: an abort, a pause, a missed deadline and a completed rollout are sent to a webhook as
 * JSON a Slack incoming webhook accepts (`text`), with the facts in `ebb` for other receivers. They ride on the
 * Events the planner records at those transitions, so they need no planner rule of their own, and they are
 * delivered from a queue of their own with retries: a receiver that is down never holds a rollout.
 *
 * The channel is shared and the Event's message holds text a tenant wrote (check names and conditions), so
 * `text` is made inert: no mention (`<!channel>`, `<@U…>`, `@here`), no masked link, no control or bidi
 * character, and link previews are off. `ebb.message` keeps the message, control characters removed.
 */
import type { App } from '../../api/app.ts';
import { ConditionType, EventReason } from '../../api/keys.ts';
import type { Stored } from '../../kube/types.ts';
import type { EventSpec } from '../app/model/actions.ts';

/** The Event reasons that are sent, and the word for each in the message. */
export const NOTIFIED: Readonly<Partial<Record<EventReason, string>>> = {
  [EventReason.rolloutAborted]: 'rollout aborted',
  [EventReason.canaryPaused]: 'rollout paused',
  [EventReason.analysisInconclusive]: 'rollout paused',
  [EventReason.progressDeadlineExceeded]: 'rollout past its progress deadline',
  [EventReason.rolloutComplete]: 'rollout complete',
};

/**
 * The condition each sent transition turns True (or False, for a completion). Its last transition time before
 * the transition marks the occurrence: the planner records the Event in the plan that turns the condition, so a
 * plan tried again (its status write failed) still sees the same time, while the next occurrence of the same
 * transition (a second pause step after a resume, a second abort after a retry, a rollout back to a revision
 * that completed before) comes after the condition turned back, at a later time.
 */
const FLIPS: Readonly<Partial<Record<EventReason, ConditionType>>> = {
  [EventReason.rolloutAborted]: ConditionType.aborted,
  [EventReason.canaryPaused]: ConditionType.paused,
  [EventReason.analysisInconclusive]: ConditionType.paused,
  [EventReason.progressDeadlineExceeded]: ConditionType.progressing,
  [EventReason.rolloutComplete]: ConditionType.progressing,
};

/**
 * Pure: what tells one occurrence of `reason` for the App's update revision from another: the last transition
 * time of the condition the transition turns, as the App stands before it (`0` while it never turned).
 */
export function occurrenceOf(app: App, reason: EventReason): string {
  const type = FLIPS[reason];
  const at = type === undefined ? undefined : app.status?.conditions?.find((c) => c.type === type)?.lastTransitionTime;
  const ms = at === undefined ? NaN : Date.parse(at);
  return Number.isFinite(ms) ? String(ms) : '0';
}

export interface Notification {
  /**
   * Names the occurrence: one notification per App, transition, revision and occurrence (`occurrenceOf`),
   * however often the same occurrence is recorded. Each destination's job id starts with it.
   */
  id: string;
  body: {
    text: string;
    unfurl_links: false;
    unfurl_media: false;
    ebb: { namespace: string; app: string; uid: string; reason: string; type: string; message: string; updateRevision: string; at: string };
  };
}

/** C0 and C1 controls, DEL, and the characters that reorder text (bidi embeddings, overrides, isolates, marks). */
const isControl = (c: number): boolean =>
  c <= 0x1f || (c >= 0x7f && c <= 0x9f) || c === 0x61c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);

/** Text without control characters (each becomes a space). */
export const withoutControls = (text: string): string => Array.from(text, (ch) => (isControl(ch.codePointAt(0) ?? 0) ? ' ' : ch)).join('');

/**
 * Text a Slack-compatible receiver shows as written: `&`, `<` and `>` escaped as Slack requires (so no `<!here>`,
 * `<@U…>` or `<url|label>` is parsed), `@` replaced by the full-width `＠` (receivers that link plain `@here` or
 * `@channel`), and no control characters.
 */
export function slackInert(text: string): string {
  return withoutControls(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/@/g, '\uff20');
}

/** The notification an Event makes, if its reason is one that is sent. */
export function notificationOf(app: Stored<App>, event: EventSpec, now: Date): Notification | undefined {
  const what = NOTIFIED[event.reason];
  if (!what) return undefined;
  const { namespace, name, uid } = app.metadata;
  const updateRevision = app.status?.updateRevision ?? '';
  const icon = event.type === 'Warning' ? ':warning:' : event.reason === EventReason.rolloutComplete ? ':white_check_mark:' : ':pause_button:';
  return {
    id: ['notify', uid ?? `${namespace}/${name}`, event.reason, updateRevision || 'none', occurrenceOf(app, event.reason)]
      .join('.')
      .replace(/[^A-Za-z0-9._-]/g, '_'),
    body: {
      text: `${icon} App ${namespace}/${name}: ${what}. ${slackInert(event.message.slice(0, 2_000))}`,
      unfurl_links: false,
      unfurl_media: false,
      ebb: {
        namespace,
        app: name,
        uid: uid ?? '',
        reason: event.reason,
        type: event.type,
        message: withoutControls(event.message),
        updateRevision,
        at: now.toISOString(),
      },
    },
  };
}
