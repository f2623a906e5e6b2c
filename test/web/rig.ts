// What the staff app's Chromium tests share: the app built when its sources are newer than dist/web, one service per
// test file, one Chromium per test file, pages signed in through the real sign-in form, axe-core injected on demand,
// and screenshots into $WEB_SHOTS (default /tmp/web-shots) for people to look at.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { buildWeb, webBuildIsStale } from '../../src/web/tools/build.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { patience } from '../helpers/patience.ts';
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

// Assertions that wait for what they assert. A screen shows an element before its content (a heading from the address,
// a row before its figures, a form before its saved value), and a busy box shows it later still: reading once right
// after an action reads a proxy of the state, and CI went red on exactly that twice (faultRules, drafts). These poll
// until the value is the expected one, and after WAIT_MS × patience() (the load per core) fail with the usual
// assertion message on the last value read. An absence (`expectCount(…, 0)`) passes at once, as before.
export const WAIT_MS = 30_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads `read()` until `accept` holds (polling), and gives the last value read: accepted, or the one at the deadline. */
export async function readUntil<T>(read: (timeout: number) => Promise<T>, accept: (value: T) => boolean, timeoutMs = WAIT_MS): Promise<T> {
  const until = Date.now() + timeoutMs * patience();
  for (;;) {
    const value = await read(Math.max(1000, until - Date.now()));
    if (accept(value) || Date.now() > until) return value;
    await pause(50);
  }
}

const matches = (value: string | null, expected: string | RegExp) =>
  typeof expected === 'string' ? value === expected : value !== null && expected.test(value);
function assertMatches(value: string | null, expected: string | RegExp, message?: string): void {
  if (typeof expected === 'string') assert.equal(value, expected, message);
  else assert.match(value ?? '', expected, message);
}

/** The element's text becomes `expected` (equal), or matches it (RegExp); gives the text. */
export async function expectText(locator: Locator, expected: string | RegExp, message?: string): Promise<string> {
  const text = await readUntil(
    (timeout) => locator.textContent({ timeout }),
    (value) => matches(value, expected),
  );
  assertMatches(text, expected, message);
  return text!;
}

/** The form control's value becomes `expected`. */
export async function expectValue(locator: Locator, expected: string, message?: string): Promise<void> {
  assert.equal(
    await readUntil(
      (timeout) => locator.inputValue({ timeout }),
      (value) => value === expected,
    ),
    expected,
    message,
  );
}

/** The element's attribute becomes `expected`. */
export async function expectAttribute(locator: Locator, name: string, expected: string | null, message?: string): Promise<void> {
  assert.equal(
    await readUntil(
      (timeout) => locator.getAttribute(name, { timeout }),
      (value) => value === expected,
    ),
    expected,
    message,
  );
}

/** The locator matches `expected` elements (0: none left). */
export async function expectCount(locator: Locator, expected: number, message?: string): Promise<void> {
  assert.equal(
    await readUntil(
      () => locator.count(),
      (value) => value === expected,
    ),
    expected,
    message,
  );
}

/** The texts of every match become `expected` (in order). */
export async function expectTexts(locator: Locator, expected: readonly string[], message?: string): Promise<void> {
  assert.deepEqual(
    await readUntil(
      () => locator.allTextContents(),
      (value) => JSON.stringify(value) === JSON.stringify(expected),
    ),
    expected,
    message,
  );
}

/** What `read()` gives becomes (deep-)equal to `expected`: a list's order, several fields at once. */
export async function expectEqual<T>(read: () => Promise<T>, expected: T, message?: string): Promise<void> {
  assert.deepStrictEqual(await readUntil(read, (value) => isDeepStrictEqual(value, expected)), expected, message);
}
