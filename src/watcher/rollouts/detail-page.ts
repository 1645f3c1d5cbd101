/** Pure: one App's page (`/rollouts/<namespace>/<name>`) as HTML, from what the reader gathered (AppView). */
import type { AnalysisRun } from '../../api/analysis.ts';
import type { CanaryStep } from '../../api/update-strategy.ts';
import type { Pod } from '../../kube/types.ts';
import { readBaseline } from '../../workers/inplace/restart-baseline.ts';
import { podIsUpdatingInPlace } from '../../workers/inplace/status.ts';
import { rolloutSettings } from '../../workers/app/model/rollout-settings.ts';
import { getOrdinal, getPodRevision, isRunningAndReady } from '../../workers/app/pods/predicates.ts';
import { actionsNav } from './action-page.ts';
import type { RolloutAction } from './actions.ts';
import type { AppView, EventRow } from './detail-model.ts';
import { html, jsonBlock, type Html } from './html.ts';
import { badge } from './list-page.ts';
import { summarize, truncate } from './summary.ts';

export type { AppReader } from './detail-read.ts';

/** Events shown at most (most recent first). */
export const EVENTS_SHOWN = 20;
/** Charts drawn at most (one per check with numeric measurements). */
export const CHARTS_SHOWN = 8;

function stepText(step: CanaryStep): string {
  if (step.replicas !== undefined) return `update pods until ${String(step.replicas)} run the update revision`;
  if (step.pause) return step.pause.duration ? `pause for ${step.pause.duration}` : 'pause until someone resumes';
  if (step.analysis) return `run the checks ${step.analysis.join(', ')}`;
  return 'step';
}

function revisions(v: AppView): Html {
  const s = v.app.status ?? {};
  const update = v.app.spec.template.spec?.containers.map((c) => c.image ?? '') ?? [];
  const stablePod = v.pods.find((p) => getPodRevision(p) === s.currentRevision);
  const stable = s.currentRevision === s.updateRevision ? update : (stablePod?.spec?.containers.map((c) => c.image ?? '') ?? []);
  const row = (label: string, rev: string | undefined, pods: number | undefined, images: string[]): Html =>
    html`<tr><th scope="row">${label}</th><td><code>${rev ?? '—'}</code></td><td>${pods ?? 0}</td><td>${images.length > 0 ? images.join(', ') : html`<span class="muted">no pod at this revision</span>`}</td></tr>`;
  return html`<section aria-labelledby="h-rev"><h2 id="h-rev">Revisions</h2>
<table><thead><tr><th scope="col">Revision</th><th scope="col">Name</th><th scope="col">Pods</th><th scope="col">Images</th></tr></thead>
<tbody>${row('stable (current)', s.currentRevision, s.currentReplicas, stable)}${row('update', s.updateRevision, s.updatedReplicas, update)}</tbody></table></section>`;
}

function canary(v: AppView): Html {
  const steps = rolloutSettings(v.app).canarySteps;
  if (steps.length === 0) return html``;
  const current = v.app.status?.canary?.step ?? 0;
  return html`<section aria-labelledby="h-steps"><h2 id="h-steps">Canary steps</h2>
<ol>${steps.map((st, i) => html`<li${i === current ? html` class="current" aria-current="step"` : ''}>${stepText(st)}${i < current ? ' (done)' : ''}</li>`)}</ol>
${current >= steps.length ? html`<p>Every step is done.</p>` : ''}</section>`;
}

function howUpdated(pod: Pod, update: string | undefined): string {
  if (podIsUpdatingInPlace(pod)) return 'updating in place';
  const rev = getPodRevision(pod);
  if (rev === undefined) return '—';
  if (readBaseline(pod)?.revision === rev) return 'updated in place';
  return rev === update ? 'created at the update revision' : 'created at its revision';
}

function pods(v: AppView): Html {
  const name = v.app.metadata.name ?? '';
  const update = v.app.status?.updateRevision;
  const current = v.app.status?.currentRevision;
  const sorted = [...v.pods].sort((a, b) => getOrdinal(name, a.metadata.name) - getOrdinal(name, b.metadata.name));
  const revLabel = (rev: string | undefined): string => (rev === undefined ? '—' : rev === update ? `update (${rev})` : rev === current ? `stable (${rev})` : rev);
  const restarts = (p: Pod): number => (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  return html`<section aria-labelledby="h-pods"><h2 id="h-pods">Pods</h2>
<table><thead><tr><th scope="col">Ordinal</th><th scope="col">Pod</th><th scope="col">Revision</th><th scope="col">Ready</th><th scope="col">Updated</th><th scope="col">Restarts</th><th scope="col">Node</th></tr></thead>
<tbody>${sorted.map(
    (p) =>
      html`<tr><td>${getOrdinal(name, p.metadata.name)}</td><td>${p.metadata.name ?? ''}</td><td>${revLabel(getPodRevision(p))}</td><td>${isRunningAndReady(p) ? 'ready' : 'not ready'}</td><td>${howUpdated(p, update)}</td><td>${restarts(p)}</td><td>${p.spec?.nodeName ?? 'not scheduled'}</td></tr>`,
  )}</tbody></table>${v.pods.length === 0 ? html`<p class="muted">No pod.</p>` : ''}</section>`;
}

/** A check's numeric measurements as uPlot data: [times in seconds, values]; undefined when none is a number. */
export function chartData(run: AnalysisRun): [number[], (number | null)[]] | undefined {
  const xs: number[] = [];
  const ys: (number | null)[] = [];
  for (const m of run.measurements) {
    const t = Date.parse(m.measuredAt);
    if (!Number.isFinite(t)) continue;
    const y = m.value === undefined || m.value.trim() === '' ? Number.NaN : Number(m.value);
    xs.push(t / 1000);
    ys.push(Number.isFinite(y) ? y : null);
  }
  return ys.some((y) => y !== null) ? [xs, ys] : undefined;
}

function analysis(v: AppView): Html {
  const runs = v.app.status?.analysis?.runs ?? [];
  const history = v.app.status?.analysisHistory ?? [];
  if (runs.length === 0 && history.length === 0) return html``;
  const last = (r: AnalysisRun): string => {
    const m = r.measurements.at(-1);
    return m ? truncate(`${m.phase}${m.value !== undefined ? ` ${m.value}` : ''}${m.message ? `: ${m.message}` : ''}`, 240) : '—';
  };
  const charted = runs.flatMap((r, i) => {
    const data = chartData(r);
    return data ? [{ r, i, data }] : [];
  });
  return html`<section aria-labelledby="h-analysis"><h2 id="h-analysis">Analysis</h2>
${runs.length > 0 ? html`<table><caption>Checks of revision <code>${v.app.status?.analysis?.revision ?? ''}</code></caption>
<thead><tr><th scope="col">Check</th><th scope="col">Step</th><th scope="col">Phase</th><th scope="col">Passed</th><th scope="col">Failed</th><th scope="col">Inconclusive</th><th scope="col">Errors</th><th scope="col">Last measurement</th></tr></thead>
<tbody>${runs.map((r) => html`<tr><td>${r.name}${r.dryRun ? ' (dry run)' : ''}</td><td>${r.step ?? 'background'}</td><td>${r.phase}</td><td>${r.successful}</td><td>${r.failed}</td><td>${r.inconclusive}</td><td>${r.errors ?? 0}</td><td>${last(r)}</td></tr>`)}</tbody></table>` : ''}
${charted.slice(0, CHARTS_SHOWN).map(
  ({ r, i, data }) => html`<figure class="chart"><div id="chart-${i}" role="img" aria-label="${`Measurements of ${r.name} over time`}"></div>
<figcaption>${r.name}: ${data[1].map((y) => (y === null ? '—' : String(y))).join(', ')}</figcaption>
${jsonBlock(`chart-data-${i}`, { title: r.name, series: [r.name], data }, `chart-${i}`)}</figure>`,
)}
${history.length > 0 ? html`<table><caption>Earlier revisions</caption><thead><tr><th scope="col">Revision</th><th scope="col">Outcome</th><th scope="col">Finished</th><th scope="col">Checks</th></tr></thead>
<tbody>${history.map((h) => html`<tr><td><code>${h.revision}</code></td><td>${h.outcome}</td><td>${h.finishedAt ?? '—'}</td><td>${h.checks.map((c) => `${c.name}: ${c.phase}`).join(', ')}</td></tr>`)}</tbody></table>` : ''}
</section>`;
}

function prewarm(v: AppView): Html {
  const p = v.explanation.prewarm;
  if (!p) return html``;
  return html`<section aria-labelledby="h-prewarm"><h2 id="h-prewarm">Pre-warm</h2>
<p>${p.nodesPulled} of ${p.nodesRequested} nodes pulled, ${p.nodesFailed} failed; images: ${p.images.join(', ')}</p>
<table><thead><tr><th scope="col">Node</th><th scope="col">State</th><th scope="col">Pulled</th><th scope="col">Why</th><th scope="col">Pods to update there</th></tr></thead>
<tbody>${p.nodes.map(
    (n) =>
      html`<tr><td>${n.node}</td><td>${n.state}</td><td>${n.pulled}/${n.images.length}</td><td>${n.images
        .filter((i) => i.message)
        .map((i) => `${i.image}: ${i.message ?? ''}`)
        .join('; ')}</td><td>${n.pods.join(', ')}</td></tr>`,
  )}</tbody></table></section>`;
}

function events(list: readonly EventRow[]): Html {
  const shown = list.slice(0, EVENTS_SHOWN);
  return html`<section aria-labelledby="h-events"><h2 id="h-events">Recent Events</h2>
${shown.length === 0 ? html`<p class="muted">No Event.</p>` : html`<table><thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Message</th><th scope="col">Count</th></tr></thead>
<tbody>${shown.map((e) => html`<tr><td>${e.at}</td><td>${e.type}</td><td>${e.reason}</td><td class="message">${truncate(e.message, 1024)}</td><td>${e.count}</td></tr>`)}</tbody></table>`}</section>`;
}

/** The App's page body: all of it is live (replaced when the page changes); `actions`: those offered to the viewer. */
export function detailBody(base: string, v: AppView, actions: readonly RolloutAction[] = []): Html {
  const ns = v.app.metadata.namespace ?? '';
  const name = v.app.metadata.name ?? '';
  const summary = summarize(v.app);
  return html`<div id="app" data-live>
<p><a href="${base}/">← all rollouts</a></p>
<h1>${ns}/${name} ${summary ? badge(summary.state) : ''}</h1>
${actionsNav(base, v.app, actions)}
<p>${v.explanation.line}</p>
${summary?.message ? html`<p class="message">${summary.message}</p>` : ''}
${revisions(v)}
${canary(v)}
${analysis(v)}
${pods(v)}
${prewarm(v)}
${events(v.events)}
<section aria-labelledby="h-explain"><h2 id="h-explain">Explain</h2>
<pre>${v.explainText}</pre>
<p class="muted">The command line's answer, with the next actions a reconcile would take: <code>kubectl ebb rollout explain app/${name} -n ${ns}</code></p></section>
${v.notes.length > 0 ? html`<p class="muted">Not shown: ${v.notes.join('; ')}</p>` : ''}
</div>`;
}
