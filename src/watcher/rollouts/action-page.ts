/**
 * Pure: the rollouts page's action markup. The App page offers each action the viewer may take as a link to
 * its confirm step (GET: what it does, on which revision); the confirm step is a POST form to the same address,
 * carrying the update revision confirmed. Both work without script.
 */
import type { App } from '../../api/app.ts';
import { ACTION_TEXT, type RolloutAction } from './actions.ts';
import type { ActionOutcome } from './action-run.ts';
import { html, type Html } from './html.ts';

const appPath = (base: string, namespace: string, name: string): string => `${base}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
export const actionPath = (base: string, namespace: string, name: string, op: RolloutAction): string => `${appPath(base, namespace, name)}/${op}`;

/** The App page's actions: one link per action offered (none: nothing). */
export function actionsNav(base: string, app: App, offered: readonly RolloutAction[]): Html {
  if (offered.length === 0) return html``;
  const ns = app.metadata.namespace ?? '';
  const name = app.metadata.name ?? '';
  return html`<nav class="actions" aria-label="Actions">${offered.map(
    (op) => html`<a class="button" href="${actionPath(base, ns, name, op)}" data-action="${op}">${ACTION_TEXT[op].label}</a>`,
  )}</nav>`;
}

/** The confirm step: what `op` does to `app`, and the POST form that writes it. */
export function confirmBody(base: string, app: App, op: RolloutAction): Html {
  const ns = app.metadata.namespace ?? '';
  const name = app.metadata.name ?? '';
  const revision = app.status?.updateRevision ?? '';
  const text = ACTION_TEXT[op];
  return html`<div id="confirm">
<h1>${text.label} ${ns}/${name}?</h1>
<p>This ${text.does}.</p>
<p>Update revision <code>${revision || '—'}</code>, stable revision <code>${app.status?.currentRevision ?? '—'}</code>. The change is recorded in the App's Events with your name.</p>
<form method="post" action="${actionPath(base, ns, name, op)}">
<input type="hidden" name="revision" value="${revision}">
<button type="submit" class="danger">${text.label}</button>
<a href="${appPath(base, ns, name)}">Cancel</a>
</form>
</div>`;
}

/** After the POST: what was written, or why nothing was. */
export function outcomeBody(base: string, namespace: string, name: string, op: RolloutAction, outcome: ActionOutcome): Html {
  const what =
    outcome.kind === 'done'
      ? html`<p role="status">Done: ${outcome.message}.</p>`
      : outcome.kind === 'gone'
        ? html`<p role="alert">The App no longer exists: nothing was written.</p>`
        : html`<p role="alert">Nothing was written: ${outcome.message}.</p>`;
  return html`<div id="outcome" data-outcome="${outcome.kind}">
<h1>${ACTION_TEXT[op].label} ${namespace}/${name}</h1>
${what}
<p><a href="${appPath(base, namespace, name)}">Back to the App</a></p>
</div>`;
}

/** A refused action: who is refused and what they would need. */
export function refusedBody(base: string, namespace: string, name: string, op: RolloutAction, why: string): Html {
  return html`<div id="refused">
<h1>${ACTION_TEXT[op].label} ${namespace}/${name}: not allowed</h1>
<p role="alert">${why}</p>
<p>Nothing was written.</p>
<p><a href="${appPath(base, namespace, name)}">Back to the App</a></p>
</div>`;
}
