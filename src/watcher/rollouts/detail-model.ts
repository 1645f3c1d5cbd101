/** What one App's page shows, as the reader gathered it (detail-read.ts) and the page draws it (detail-page.ts). */
import type { App } from '../../api/app.ts';
import type { Explanation } from '../../cli/rollout/explain/model.ts';
import type { Pod } from '../../kube/types.ts';

/** One Event of the App, as the page lists it. */
export interface EventRow {
  /** ISO time of its last occurrence ('' when it carries none). */
  at: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  from: string;
}

export interface AppView {
  app: App;
  pods: Pod[];
  /** Most recent first. */
  events: EventRow[];
  /** `ebb rollout explain`'s answer from the same reads, and its text. */
  explanation: Explanation;
  explainText: string;
  /** Sources the reader could not read, and why. */
  notes: string[];
  /** When it was read (ISO time). */
  at: string;
}
