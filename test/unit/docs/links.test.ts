/**
 * The docs hold together: the README stays a front page, every relative link of the Markdown pages reaches a file
 * (and a heading, when it names one), every repository path docs/architecture.md names exists, and the decisions'
 * index lists every entry.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';

const README_MAX_LINES = 250;

const tracked = execFileSync('git', ['ls-files'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const pages = tracked.filter((f) => f.endsWith('.md') && !f.startsWith('node_modules/'));
const read = (file: string): string => readFileSync(join(PROJECT_ROOT, file), 'utf8');
const anchorCache = new Map<string, Set<string>>();
const anchorsOfPage = (file: string): Set<string> => anchorCache.get(file) ?? anchorCache.set(file, anchorsOf(read(file))).get(file) ?? new Set();

/** Markdown outside fenced code blocks. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** The anchors of a page's headings, as GitHub makes them (a repeated heading gets -1, -2, …). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (heading ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative link targets of a page: [text](target), without web and mail links. */
function linksOf(text: string): string[] {
  const out: string[] = [];
  for (const [, target] of prose(text)
    .replace(/`[^`\n]*`/g, '')
    .matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (target && !/^[a-z]+:/i.test(target)) out.push(target);
  }
  return out;
}

function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const link of linksOf(read(page))) {
    const [path = '', anchor] = link.split('#');
    const target = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
    if (relative(PROJECT_ROOT, join(PROJECT_ROOT, target)).startsWith('..') || !existsSync(join(PROJECT_ROOT, target))) {
      broken.push(`${link} (no file ${target})`);
      continue;
    }
    if (anchor !== undefined && target.endsWith('.md') && !anchorsOfPage(target).has(anchor)) broken.push(`${link} (no heading #${anchor} in ${target})`);
  }
  return broken;
}

describe('the docs', () => {
  it(`keep the README a front page (at most ${README_MAX_LINES} lines)`, () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it.each(pages)('%s: every relative link reaches its file and heading', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('docs/architecture.md names only paths that exist', () => {
    const named = [...prose(read('docs/architecture.md')).matchAll(/`([A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]*)+)`/g)].map((m) => m[1] ?? '');
    const rooted = /^(src|deploy|harness|test|bench|hack|docs|\.ci)\//;
    const missing = named.filter((p) => {
      if (rooted.test(p)) return !existsSync(join(PROJECT_ROOT, p));
      // A path inside a room (`prewarm/plan.ts`, `rollout/`): some tracked file must end with it.
      if (p.endsWith('.ts') || p.endsWith('/')) return !tracked.some((f) => f.endsWith(`/${p}`) || f.includes(`/${p}`));
      return false;
    });
    expect(missing).toEqual([]);
  });

  it('docs/decisions/README.md indexes every entry of every area page', () => {
    const index = read('docs/decisions/README.md');
    const areas = tracked.filter((f) => /^docs\/decisions\/(?!README\.md)[^/]+\.md$/.test(f));
    const unindexed = areas.flatMap((file) => {
      const page = file.slice('docs/decisions/'.length);
      // An entry is a `##` section (the page's title and a section's `###` parts are not).
      const entries = [...prose(read(file)).matchAll(/^## (.+)$/gm)].flatMap((m) => [...anchorsOf(`## ${m[1] ?? ''}`)]);
      return entries.filter((a) => !index.includes(`](${page}#${a})`)).map((a) => `${page}#${a}`);
    });
    expect(areas.length).toBeGreaterThan(1);
    expect(unindexed).toEqual([]);
  });

  it('finds a broken link, a missing heading and a repeated heading', () => {
    expect(anchorsOf('# A b\n## A b\n```\n# not a heading\n```\n### `x.ts`: the C!')).toEqual(new Set(['a-b', 'a-b-1', 'xts-the-c']));
    expect(linksOf('see [x](docs/x.md#y), `[no](z.md)`, [web](https://example.com)\n```\n[no](w.md)\n```')).toEqual(['docs/x.md#y']);
  });
});
