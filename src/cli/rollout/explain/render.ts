/**
 * Pure: an Explanation as `ebb rollout explain` prints it. On a terminal: bold section titles and every line
 * cut to the terminal's width, so the answer stays one screen; piped: plain text, lines whole, no escape codes.
 */
import { printable, printableDeep } from '../../printable.ts';
import type { Explanation, LastReconcile, NextStep, WaitItem } from './model.ts';

export interface RenderOptions {
  tty: boolean;
  /** Terminal columns (tty only). */
  width?: number | undefined;
  /** Times as ISO times, not relative to the answer's time: the same answer renders the same later (a page's ETag). */
  absolute?: boolean | undefined;
}

/** `in 1m05s`, `12s ago`, `now`: a time relative to `now`. */
export function relative(iso: string | number, now: Date): string {
  const t = typeof iso === 'number' ? iso : Date.parse(iso);
  if (Number.isNaN(t)) return String(iso);
  const ms = t - now.getTime();
  const s = Math.round(Math.abs(ms) / 1000);
  if (s === 0) return 'now';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const text = h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

/** A time as the answer writes it: relative to the answer's time, or absolute (`RenderOptions.absolute`). */
type When = (iso: string | number) => string;

const until = (w: WaitItem, when: When): string => (w.until ? ` (until ${w.until}, ${when(w.until)})` : '');

/** Rows as aligned columns, two spaces apart (the last column not padded). */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function podSection(e: Explanation, when: When): string[] {
  if (e.pods.length === 0) return ['  (no pods)'];
  const rows = e.pods.map((p) => {
    const waits = p.waits.map((w) => `${w.message}${w.until ? ` (${when(w.until)})` : ''}`);
    const next = p.next.map((n) => `next: ${n}`);
    return [p.name, p.revision, p.node ?? '-', p.ready ? 'yes' : 'no', [...waits, ...next].join('; ') || '-'];
  });
  return table([['POD', 'REVISION', 'NODE', 'READY', 'WAITING FOR'], ...rows]).map((l) => `  ${l}`);
}

function prewarmSection(e: Explanation): string[] {
  const p = e.prewarm;
  if (!p) return [];
  const head = `${p.nodesPulled}/${p.nodesRequested} requested nodes pulled${p.nodesFailed > 0 ? `, ${p.nodesFailed} failed` : ''} · images ${p.images.join(', ') || '-'}`;
  const rows = p.nodes.map((n) => {
    const images = n.images.map((i) => `${i.image} ${i.phase}${i.attempts ? ` (attempt ${i.attempts})` : ''}${i.message ? `: ${i.message}` : ''}`);
    return [n.node, n.state, `${n.pulled}/${n.images.length || p.images.length}`, n.pods.join(',') || '-', images.join('; ') || '-'];
  });
  return [head, ...(rows.length > 0 ? table([['NODE', 'STATE', 'PULLED', 'PODS TO UPDATE', 'IMAGES'], ...rows]) : ['(no node)'])].map((l) => `  ${l}`);
}

function nextLine(n: NextStep, at: When): string {
  const when = n.at ? `${at(n.at)} (${n.at})` : 'now';
  return `  ${when.padEnd(12)} ${n.what}`;
}

function reconcileSection(last: LastReconcile | undefined, at: When): string[] {
  if (!last) return [];
  const when = last.finishedAt === undefined ? 'unfinished' : at(last.finishedAt);
  const rv = last.returnValue ?? {};
  const actions = Object.entries((rv['actions'] as Record<string, number> | undefined) ?? {})
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const wait = rv['wait'] as { reason?: string; until?: string } | undefined;
  const parts = [
    last.failed ? `failed: ${last.failedReason ?? ''}` : typeof rv['result'] === 'string' ? rv['result'] : 'done',
    typeof rv['ms'] === 'number' ? `${rv['ms']} ms` : undefined,
    actions ? `actions: ${actions}` : 'no writes',
    wait?.reason ? `wait ${wait.reason}${wait.until ? ` until ${wait.until}` : ''}` : undefined,
  ].filter((x): x is string => x !== undefined);
  return [`  ${when} (job ${last.jobId}): ${parts.join(' · ')}`, ...last.logs.map((l) => `    | ${l}`)];
}

function header(e: Explanation): string[] {
  const { current, update } = e.revisions;
  const rev = current && current !== update ? `${current} → ${update ?? '?'}` : (update ?? '-');
  const s = e.strategy;
  const strategy = `${s.type}, ${s.podUpdatePolicy}${s.partition > 0 ? `, partition ${s.partition}` : ''}${s.paused ? ', paused' : ''}`;
  return [e.line, `app ${e.app.namespace}/${e.app.name} · revision ${rev} · ${strategy} · ${e.state}`];
}

function waitsSection(e: Explanation, when: When): string[] {
  if (e.waits.length === 0) return [e.state === 'done' ? '  nothing: the rollout is complete' : '  nothing the App reports; see the pods'];
  return e.waits.map((w) => `  ${w.kind}: ${w.message}${until(w, when)}`);
}

/** The whole answer, one line per row, ending with a newline. */
export function renderExplanation(e: Explanation, opts: RenderOptions): string {
  const now = new Date(e.at);
  const when: When = opts.absolute ? (iso) => `at ${new Date(iso).toISOString()}` : (iso) => relative(iso, now);
  const title = (t: string): string => (opts.tty ? `\x1b[1m${t}\x1b[0m` : t);
  const lines: string[] = [...header(e), '', title('WAITING FOR'), ...waitsSection(e, when), '', title('PODS'), ...podSection(e, when)];
  if (e.prewarm) lines.push('', title('PRE-WARM'), ...prewarmSection(e));
  lines.push('', title('NEXT'), ...(e.next.length === 0 ? ['  nothing planned: ebb acts on the next change'] : e.next.map((n) => nextLine(n, when))));
  if (e.lastReconcile) lines.push('', title('LAST RECONCILE'), ...reconcileSection(e.lastReconcile, when));
  if (e.notes.length > 0) lines.push('', title('NOTES'), ...e.notes.map((n) => `  ${n}`));
  const width = Math.max(40, (opts.width ?? 80) - 1);
  const cut = (l: string): string => (!opts.tty || l.length <= width || l.includes('\x1b') ? l : `${l.slice(0, width - 1)}…`);
  return `${lines.map(cut).join('\n')}\n`;
}

/**
 * What `ebb rollout explain` writes: the text (renderExplanation) or JSON of `e`, with every string from the
 * cluster or the queues (names, messages, job data, failure reasons) cleaned of escape sequences and control
 * characters first (printable.ts); on a terminal the only escapes written are the renderer's own bold titles.
 */
export function printExplanation(e: Explanation, opts: RenderOptions & { json: boolean }): string {
  const safe = printableDeep(e);
  return opts.json ? printable(`${JSON.stringify(safe, null, 2)}\n`, { keepNewlines: true }) : renderExplanation(safe, opts);
}
