/**
 * The files the rollouts page loads, below `<base>/-/` (a `-` is no namespace name): its stylesheet and script
 * (here), and uPlot's script and stylesheet as the `uplot` package ships them, read once on first use.
 *
 * The script is progressive enhancement: without it every page works (links, a GET form); with it the page
 * asks for itself again every few seconds with the ETag it has (`If-None-Match`), and on a changed answer
 * replaces the elements marked `data-live`; the chart of measurements is drawn with uPlot from the JSON block
 * the detail page carries.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const CSS = `
:root { color-scheme: light; font-family: system-ui, sans-serif; color: #1a1a1a; background: #fff; }
body { margin: 0; }
header nav { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1rem; background: #1f2933; }
header a { color: #fff; font-weight: 600; }
header .who { margin-left: auto; color: #e4e7eb; font-size: .9rem; }
main { padding: 1rem; max-width: 90rem; }
a { color: #0b4f9c; }
a:focus-visible, button:focus-visible, select:focus-visible { outline: 3px solid #e8a317; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
caption { text-align: left; padding: .3rem 0; color: #3e4c59; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #cbd2d9; vertical-align: top; }
th { background: #f0f4f8; }
td.message, td.images { max-width: 28rem; overflow-wrap: anywhere; }
.filters { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin-bottom: .5rem; }
.counts { display: flex; gap: .75rem; list-style: none; padding: 0; flex-wrap: wrap; }
.counts a { text-decoration: none; color: inherit; }
.counts a[aria-current] { outline: 2px solid #1f2933; border-radius: 4px; }
.count { font-weight: 700; }
.state { display: inline-block; padding: .1rem .45rem; border-radius: 4px; font-size: .85rem; font-weight: 600; color: #fff; }
.state-aborted { background: #a61b1b; }
.state-quarantined { background: #6b2c91; }
.state-held { background: #9c4221; }
.state-paused { background: #6b5800; }
.state-rolling { background: #0b5cad; }
.state-complete { background: #2f6b3a; }
.current { font-weight: 700; }
.current::before { content: "▶ "; }
.chart { margin: .5rem 0 1rem; }
.muted { color: #52606d; }
.live-status { padding: 0 1rem; color: #52606d; font-size: .85rem; }
code { background: #f0f4f8; padding: 0 .2rem; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin: .25rem 0 1rem; }
.button, button { display: inline-block; padding: .35rem .8rem; border: 1px solid #1f2933; border-radius: 4px; background: #f0f4f8; color: #1a1a1a; font: inherit; text-decoration: none; cursor: pointer; }
button.danger { background: #a61b1b; border-color: #a61b1b; color: #fff; }
form { display: flex; gap: 1rem; align-items: center; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f8fafc; padding: .5rem; border: 1px solid #cbd2d9; }
`;

const JS = `
(() => {
  'use strict';
  const POLL_MS = 5000;
  let etag = null;
  function drawCharts() {
    if (typeof window.uPlot !== 'function') return;
    for (const block of document.querySelectorAll('script[type="application/json"][data-chart]')) {
      const target = document.getElementById(block.dataset.chart);
      if (!target) continue;
      let spec;
      try { spec = JSON.parse(block.textContent || '{}'); } catch { continue; }
      target.replaceChildren();
      if (!Array.isArray(spec.data) || spec.data.length < 2 || spec.data[0].length === 0) continue;
      const colours = ['#0b5cad', '#a61b1b', '#2f6b3a', '#6b2c91', '#9c4221', '#6b5800'];
      const series = [{}].concat(spec.series.map((label, i) => ({ label, stroke: colours[i % colours.length], width: 2, points: { show: true } })));
      const width = Math.min(900, Math.max(320, target.clientWidth || 640));
      new window.uPlot({ title: spec.title, width, height: 220, series, scales: { x: { time: true } } }, spec.data, target);
    }
  }
  async function poll() {
    try {
      const headers = { 'x-requested-with': 'ebb-rollouts' };
      if (etag) headers['if-none-match'] = etag;
      const res = await fetch(location.href, { headers, cache: 'no-store', credentials: 'same-origin' });
      const status = document.getElementById('live-status');
      if (res.status === 304) return;
      if (!res.ok) { if (status) status.textContent = 'Could not update (' + res.status + '); retrying.'; return; }
      etag = res.headers.get('etag');
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      for (const fresh of doc.querySelectorAll('[data-live][id]')) {
        const old = document.getElementById(fresh.id);
        if (old) old.replaceWith(document.importNode(fresh, true));
      }
      drawCharts();
      if (status) status.textContent = 'Updated ' + new Date().toLocaleTimeString();
    } catch {
      /* the next poll tries again */
    }
  }
  function start() {
    drawCharts();
    fetch(location.href, { method: 'HEAD', cache: 'no-store', credentials: 'same-origin' })
      .then((r) => { etag = r.headers.get('etag'); })
      .catch(() => undefined)
      .finally(() => setInterval(poll, POLL_MS));
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
})();
`;

export interface Asset {
  type: string;
  body: string | Buffer;
}

const OWN: Readonly<Record<string, Asset>> = {
  'page.css': { type: 'text/css; charset=utf-8', body: CSS },
  'page.js': { type: 'text/javascript; charset=utf-8', body: JS },
};
const UPLOT: Readonly<Record<string, string>> = { 'uPlot.iife.min.js': 'text/javascript; charset=utf-8', 'uPlot.min.css': 'text/css; charset=utf-8' };
const loaded = new Map<string, Promise<Buffer>>();

function uplotFile(file: string): Promise<Buffer> {
  let p = loaded.get(file);
  if (!p) {
    const dir = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
    p = readFile(join(dir, file));
    loaded.set(file, p);
  }
  return p;
}

/** The asset named `file` (below `<base>/-/`), or undefined for any other name. */
export async function asset(file: string): Promise<Asset | undefined> {
  const own = OWN[file];
  if (own) return own;
  const type = UPLOT[file];
  return type === undefined ? undefined : { type, body: await uplotFile(file) };
}
