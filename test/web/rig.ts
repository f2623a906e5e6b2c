// What the staff app's Chromium tests share: the app built when its sources are newer than dist/web, one service per
// test file, one Chromium per test file, pages signed in through the real sign-in form, axe-core injected on demand,
// and screenshots into $WEB_SHOTS (default /tmp/web-shots) for people to look at.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildWeb, webBuildIsStale } from '../../src/web/tools/build.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export const SHOTS = process.env.WEB_SHOTS ?? '/tmp/web-shots';
fs.mkdirSync(SHOTS, { recursive: true });

export const VIEWPORTS = [
  { width: 1920, height: 1080 },
  { width: 1280, height: 800 },
  { width: 768, height: 1024 },
  { width: 390, height: 844 },
] as const;

let building: Promise<void> | undefined;
/** Builds dist/web once per process when a source is newer (a few seconds). */
export function ensureBuilt(): Promise<void> {
  building ??= webBuildIsStale() ? buildWeb() : Promise.resolve();
  return building;
}

export type Rig = { server: TestServer; browser: Browser; close(): Promise<void> };

export async function startRig(env: Record<string, string> = {}): Promise<Rig> {
  await ensureBuilt();
  const [server, browser] = await Promise.all([startTestServer(env), launchChromium()]);
  return {
    server,
    browser,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

export type PageOptions = { width?: number; height?: number; locale?: string; colorScheme?: 'light' | 'dark' };

/** A page in its own context (own storage), collecting console errors and CSP violations into `problems`. */
export async function openPage(browser: Browser, url: string, options: PageOptions = {}): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    locale: options.locale ?? 'en-US',
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  await page.goto(url);
  return { page, context, problems };
}

/** Signs in through the form as a person would: type, press Enter. */
export async function signInThroughForm(page: Page, username: string, password: string): Promise<void> {
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(password);
  await page.keyboard.press('Enter');
  // Signed in: the account link is in the header (the navigation too, unless a new password is owed first).
  await page.locator('header a.who').waitFor({ state: 'attached' });
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now (injected through the test driver, not the page's CSP). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

export function assertNoProblems(problems: string[], where: string): void {
  assert.deepEqual(problems, [], `${where}: console errors or CSP violations`);
}

/** Moves inside the app as a link click would (no page load), and waits until the screen has its data. */
export async function goInside(page: Page, path: string): Promise<void> {
  await page.evaluate((to) => {
    history.pushState(null, '', to);
    dispatchEvent(new PopStateEvent('popstate'));
  }, path);
  await settled(page);
}

/** The screen's code and data are in: no "Loading…" left. */
export async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
}
