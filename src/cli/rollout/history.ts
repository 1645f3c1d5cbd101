/** Pure: an App's revision history as `ebb rollout history` prints it, and the revision `ebb rollout undo` goes back to. */
import type { App } from '../../api/app.ts';
import type { PodTemplateSpec } from '../../api/pod-template.ts';
import type { AbortStatus } from '../../api/rollout-abort.ts';
import type { ControllerRevision, Named } from '../../kube/types.ts';
import { sameTemplate, sortRevisions, templateOf } from '../../workers/app/revisions/revisions.ts';
import { analysisByRevision } from './history-analysis.ts';

type Revision = Named<ControllerRevision>;

export type UndoChoice =
  | { kind: 'rollback'; revision: Revision; template: PodTemplateSpec }
  /** The App's template already is that revision's: nothing to write. */
  | { kind: 'skip'; revision: Revision; message: string }
  | { kind: 'error'; message: string };

/**
 * The revision to go back to, as `kubectl rollout undo` picks it for a StatefulSet: revision `toRevision`,
 * or (0) the one before the newest. `revisions` are the App's own, in any order.
 */
export function chooseUndo(app: App, revisions: readonly Revision[], toRevision: number): UndoChoice {
  const sorted = sortRevisions(revisions);
  if (sorted.length === 0) return { kind: 'error', message: `no rollout history found for app "${app.metadata.name ?? ''}"` };
  let chosen: Revision | undefined;
  if (toRevision > 0) {
    chosen = sorted.find((r) => r.revision === toRevision);
    if (!chosen)
      return {
        kind: 'error',
        message: `unable to find revision ${toRevision} in the history of app "${app.metadata.name ?? ''}" (revisions: ${sorted.map((r) => r.revision).join(', ')})`,
      };
  } else {
    chosen = sorted.at(-2);
    if (!chosen)
      return { kind: 'error', message: `no previous revision of app "${app.metadata.name ?? ''}" to go back to (only revision ${sorted[0]?.revision ?? 0})` };
  }
  const template = templateOf(chosen);
  if (!template) return { kind: 'error', message: `revision ${chosen.revision} (${chosen.metadata.name}) holds no pod template` };
  if (sameTemplate(chosen.data, { spec: { template: app.spec.template } }))
    return { kind: 'skip', revision: chosen, message: `skipped rollback (current template already matches revision ${chosen.revision})` };
  return { kind: 'rollback', revision: chosen, template };
}

function images(template: PodTemplateSpec | undefined): string {
  const spec = template?.spec as { containers?: { image?: string }[]; initContainers?: { image?: string }[] } | undefined;
  const list = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => c.image ?? '');
  return list.length > 0 ? list.join(',') : '-';
}

function columns(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '));
}

/**
 * The history table: revision, name, which is current or being rolled out, the outcome of its analysis
 * (the column only when a revision has one), and the images of each.
 */
export function formatHistory(app: App, revisions: readonly Revision[]): string {
  const sorted = sortRevisions(revisions);
  if (sorted.length === 0) return `app "${app.metadata.name ?? ''}" has no revisions yet\n`;
  const current = app.status?.currentRevision;
  const update = app.status?.updateRevision;
  const abort = app.status?.abort?.revision === update ? app.status?.abort : undefined;
  const mark = (name: string): string => {
    if (name === update && name === current) return 'current';
    if (name === update && abort) return `aborted (${abort.reason})`;
    if (name === update) return 'updating to';
    if (name === current) return 'current (updating from)';
    return '';
  };
  const analysis = analysisByRevision(app);
  const shown = sorted.some((r) => analysis.has(r.metadata.name));
  const rows = sorted.map((r) => [
    String(r.revision),
    r.metadata.name,
    mark(r.metadata.name),
    ...(shown ? [analysis.get(r.metadata.name)?.outcome ?? '-'] : []),
    images(templateOf(r)),
  ]);
  const header = ['REVISION', 'NAME', 'STATUS', ...(shown ? ['ANALYSIS'] : []), 'IMAGES'];
  const table = `${columns([header, ...rows])
    .map((l) => l.trimEnd())
    .join('\n')}\n`;
  return abort ? `${table}${abortNote(abort)}` : table;
}

/** The abort under the table: when, why, and the measurement that failed when an analysis aborted. */
function abortNote(abort: AbortStatus): string {
  const m = abort.measurement;
  const measured = m ? `\n  failed measurement: ${m.analysis}${m.value !== undefined ? ` = ${m.value}` : ''}${m.condition ? ` (${m.condition})` : ''}` : '';
  return `\nrevision ${abort.revision} aborted at ${abort.abortedAt} (${abort.reason}): ${abort.message}${measured}\n`;
}
