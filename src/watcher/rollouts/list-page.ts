/** Pure: the rollouts list (`/rollouts/`) as HTML, from a ListAnswer. */
import { html, type Html } from './html.ts';
import type { ListAnswer, ListQuery } from './store.ts';
import { ROLLOUT_STATES, type AppSummary, type RolloutState } from './summary.ts';

/** Apps per page of the list. */
export const PAGE_SIZE = 50;

/** The list's query from the URL's search parameters (unknown states and bad pages ignored). */
export function parseListQuery(params: URLSearchParams): ListQuery {
  const ns = params.get('namespace') ?? '';
  const state = params.get('state') ?? '';
  const page = Number.parseInt(params.get('page') ?? '1', 10);
  return {
    namespace: ns === '' ? undefined : ns.slice(0, 253),
    state: (ROLLOUT_STATES as readonly string[]).includes(state) ? (state as RolloutState) : undefined,
    page: Number.isFinite(page) && page > 0 ? page : 1,
    pageSize: PAGE_SIZE,
  };
}

/** The list's URL for `q` (below `base`). */
export function listHref(base: string, q: { namespace?: string | undefined; state?: RolloutState | undefined; page?: number }): string {
  const params = new URLSearchParams();
  if (q.namespace !== undefined) params.set('namespace', q.namespace);
  if (q.state !== undefined) params.set('state', q.state);
  if (q.page !== undefined && q.page > 1) params.set('page', String(q.page));
  const search = params.toString();
  return `${base}/${search ? `?${search}` : ''}`;
}

export const appHref = (base: string, a: { namespace: string; name: string }): string => `${base}/${encodeURIComponent(a.namespace)}/${encodeURIComponent(a.name)}`;

/** A state as a badge: its word (never its colour alone). */
export const badge = (state: RolloutState): Html => html`<span class="state state-${state}">${state}</span>`;

function progress(a: AppSummary): string {
  // status.canary.step counts from 0, and equals the number of steps once all are done.
  const canary = !a.canary ? '' : a.canary.step >= a.canary.steps ? ', canary steps done' : `, canary step ${a.canary.step + 1} of ${a.canary.steps}`;
  return `${a.updated}/${a.replicas} updated, ${a.ready} ready${canary}`;
}

function row(base: string, a: AppSummary): Html {
  return html`<tr>
<td>${badge(a.state)}</td>
<td>${a.namespace}</td>
<td><a href="${appHref(base, a)}">${a.name}</a></td>
<td>${progress(a)}</td>
<td class="images">${a.images.join(', ')}${a.moreImages > 0 ? ` (+${a.moreImages})` : ''}</td>
<td class="message">${a.message}</td>
</tr>`;
}

function filters(base: string, q: ListQuery, answer: ListAnswer): Html {
  const option = (value: string, label: string, selected: boolean): Html => html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="${base}/">
<label for="f-namespace">Namespace</label>
<select id="f-namespace" name="namespace">
${option('', 'all namespaces', q.namespace === undefined)}
${answer.namespaces.map((ns) => option(ns, ns, ns === q.namespace))}
</select>
<label for="f-state">State</label>
<select id="f-state" name="state">
${option('', 'every state', q.state === undefined)}
${ROLLOUT_STATES.map((s) => option(s, s, s === q.state))}
</select>
<button type="submit">Show</button>
</form>`;
}

function counts(base: string, q: ListQuery, answer: ListAnswer): Html {
  return html`<ul class="counts" aria-label="Apps per state">
${ROLLOUT_STATES.map(
  (s) =>
    html`<li><a href="${listHref(base, { namespace: q.namespace, state: s })}"${s === q.state ? html` aria-current="true"` : ''}>${badge(s)} <span class="count">${answer.counts[s]}</span></a></li>`,
)}
</ul>`;
}

function pager(base: string, q: ListQuery, answer: ListAnswer): Html {
  if (answer.pages <= 1) return html``;
  const link = (page: number, label: string): Html => html`<a href="${listHref(base, { namespace: q.namespace, state: q.state, page })}">${label}</a>`;
  return html`<nav class="pager" aria-label="Pages">
${answer.page > 1 ? link(answer.page - 1, '← previous') : ''}
<span>page ${answer.page} of ${answer.pages}</span>
${answer.page < answer.pages ? link(answer.page + 1, 'next →') : ''}
</nav>`;
}

/** The list's body: filters, counts per state, one page of Apps (most in need of attention first), pages. */
export function listBody(base: string, q: ListQuery, answer: ListAnswer): Html {
  const shown = answer.items.length;
  return html`<h1>Rollouts</h1>
${filters(base, q, answer)}
<section id="list" data-live>
${counts(base, q, answer)}
<table>
<caption>${answer.total} App${answer.total === 1 ? '' : 's'}${shown < answer.total ? `, ${shown} shown` : ''}; most in need of attention first</caption>
<thead><tr><th scope="col">State</th><th scope="col">Namespace</th><th scope="col">App</th><th scope="col">Progress</th><th scope="col">Images</th><th scope="col">Why</th></tr></thead>
<tbody>
${answer.items.map((a) => row(base, a))}
</tbody>
</table>
${answer.total === 0 ? html`<p class="empty">No App to show.</p>` : ''}
${pager(base, q, answer)}
</section>`;
}
