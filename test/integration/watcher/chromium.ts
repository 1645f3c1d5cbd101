/** Headless Chromium for the rollouts page's browser tests: a fresh profile, a wait that says what the page shows, screenshots. */
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const RESULTS = join(PROJECT_ROOT, 'test-results', 'rollouts-page');
const DOC_IMG = join(PROJECT_ROOT, 'docs', 'img');

/** A page of a fresh browser profile; `cleanups` receives what closes the browser and removes the profile. */
export async function browserPage(cleanups: (() => Promise<unknown>)[]): Promise<Page> {
  await mkdir(RESULTS, { recursive: true });
  const profile = await mkdtemp(join(tmpdir(), 'ebb-chromium-'));
  cleanups.push(() => rm(profile, { recursive: true, force: true }));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  cleanups.push(() => context.close());
  return context.pages()[0] ?? (await context.newPage());
}

/** Fails with what the page shows, so a failure says what the page drew instead. */
export async function shows(page: Page, text: string | RegExp, what: string, timeout = 30_000): Promise<void> {
  await page
    .getByText(text)
    .first()
    .waitFor({ timeout })
    .catch(async (err: unknown) => {
      const body = (
        await page
          .locator('body')
          .innerText()
          .catch(() => '(no body)')
      ).slice(0, 3_000);
      throw new Error(`${what}: ${String(err)}\npage shows:\n${body}`);
    });
}

/** A screenshot kept as a test artefact; `doc`: also the docs' image of that name, with EBB_DOC_SHOTS=1. */
export async function shot(page: Page, name: string, doc?: string): Promise<void> {
  const path = join(RESULTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect((await stat(path)).size).toBeGreaterThan(1000);
  if (doc && process.env['EBB_DOC_SHOTS'] === '1') {
    await mkdir(DOC_IMG, { recursive: true });
    await copyFile(path, join(DOC_IMG, doc));
  }
}
