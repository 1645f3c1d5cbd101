/**
 * Pure: HTML of the rollouts page. Every text is escaped where it is written (`esc`, or the `html` template tag
 * that escapes each value unless it is already `Html`); the page's only script and styles are files of its own
 * (`assets.ts`), so it is served under a Content-Security-Policy without inline script.
 */

/** Markup that is already safe (made by `html` or `raw`). */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

type Value = string | number | Html | undefined | false | readonly Value[];

function part(v: Value): string {
  if (v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Value[]).map(part).join('');
  return esc(String(v));
}

/** A template tag: the literal parts as written, every value escaped (arrays joined, undefined and false left out). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += part(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** JSON for a `<script type="application/json">` block (no `<` that could close it); `chart`: the element page.js draws it in. */
export function jsonBlock(id: string, value: unknown, chart?: string): Html {
  const json = JSON.stringify(value).replace(/</g, '\\u003c');
  const target = chart === undefined ? '' : ` data-chart="${esc(chart)}"`;
  return new Html(`<script type="application/json" id="${esc(id)}"${target}>${json}</script>`);
}

export interface PageParts {
  title: string;
  /** The page's base path (`/rollouts`): assets are below it. */
  base: string;
  /** Bull Board's base path, for the link to it. */
  boardPath: string | undefined;
  /** Who is looking, as the page names them. */
  who: string;
  body: Html;
  /** Loads uPlot too. */
  chart?: boolean;
}

/**
 * A whole page: a header with the links to the list and to Bull Board, then `body`. Its elements marked
 * `data-live` (with an id) are the ones page.js replaces when the page changes.
 */
export function page(p: PageParts): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title} · ebb rollouts</title>
<link rel="stylesheet" href="${p.base}/-/page.css">
${p.chart ? html`<link rel="stylesheet" href="${p.base}/-/uPlot.min.css"><script src="${p.base}/-/uPlot.iife.min.js" defer></script>` : ''}
<script src="${p.base}/-/page.js" defer></script>
</head>
<body>
<header>
<nav aria-label="ebb">
<a href="${p.base}/">Rollouts</a>
${p.boardPath ? html`<a href="${p.boardPath}/">Queues (Bull Board)</a>` : ''}
<span class="who">${p.who}</span>
</nav>
</header>
<main>
${p.body}
</main>
<p class="live-status" role="status" aria-live="polite" id="live-status"></p>
</body>
</html>
`.text;
}
