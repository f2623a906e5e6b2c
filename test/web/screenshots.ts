// `npm run docs:screenshots`: the walkthroughs' screens of docs/staff-app.md rendered in headless Chromium at
// 1280×800 against a real service with 40 days of seeded data, written to docs/images/*.png (256-colour PNG through
// ImageMagick when `convert` is there, to keep them small). Not a test: run it after a screen changes, look at the
// pictures, commit them. It runs itself under faketime at AT (UTC) so the charts of today do not depend on the hour.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.ts';
import { seededKwh, seedYear } from '../helpers/seededYear.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { ensureBuilt, settled } from './rig.ts';

const OUT = path.resolve(import.meta.dirname, '../../docs/images');
const PASSWORD = 'walkthrough-admin-1';

/**
 * The clock the pictures are taken at: today at 17:40 UTC, so "today" has a day's shape (run at 01:09, the chart had
 * one hour). The script runs itself again under faketime at that time (the service, the seed and Chromium all read the
 * faked clock); `-- --at HH:MM` picks another time, `-- --now` keeps the real clock.
 */
const AT = '17:40';
function underFixedClock(): boolean {
  const flag = process.argv.indexOf('--at');
  const time = flag > 0 ? process.argv[flag + 1] : AT;
  if (process.env.FAKETIME || process.argv.includes('--now')) return false;
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(time ?? '')) throw new Error(`--at: expected HH:MM (UTC), got "${time}"`);
  const at = `@${new Date().toISOString().slice(0, 10)} ${time}:00`;
  console.log(`docs:screenshots: under faketime at ${at.slice(1)} UTC`);
  const run = spawnSync('faketime', ['-f', at, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, TZ: 'UTC' },
  });
  if (run.error) throw new Error(`docs:screenshots needs faketime (apt-get install faketime) to pin its clock, or -- --now: ${run.error.message}`);
  process.exitCode = run.status ?? 1;
  return true;
}

function compress(file: string): void {
  try {
    execFileSync('convert', [file, '-strip', '-colors', '256', `PNG8:${file}`], { stdio: 'ignore' });
  } catch {
    // No ImageMagick: the full-colour PNG stays.
  }
}

async function save(page: Page, name: string): Promise<void> {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  compress(file);
  console.log(`${name}.png ${Math.round(fs.statSync(file).size / 1024)} KiB`);
}

/** Today up to the last whole interval, as the collector would have stored it (the seed stops at yesterday). */
function seedToday(server: TestServer, ids: number[], growthFrom: string): void {
  const { energy, db } = server.service.deps;
  const today = siteDay('UTC', new Date());
  const { start, count } = dayIntervals('UTC', today);
  const whole = Math.floor((Date.now() - start) / 900_000);
  db.sqlite.transaction(() => {
    energy.store.save(
      ids.map((meterId, m) => {
        const kwh = new Float32Array(count).fill(Number.NaN);
        for (let i = 0; i < whole; i += 1) kwh[i] = seededKwh(today, i, count, m, ids.length, growthFrom);
        return { meterId, day: today, start, kwh, flags: new Uint8Array(count), maxKw: null, stored: null };
      }),
    );
  })();
}

async function main(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  await ensureBuilt();
  const server = await startTestServer();
  const browser = await launchChromium();
  try {
    const seeded = seedYear(server, 'UTC', { subMeters: 4, days: 40 });
    seedToday(server, [seeded.siteId, ...seeded.meterIds], seeded.lastMonth.from);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', colorScheme: 'light' });
    const page = await context.newPage();
    const go = async (to: string) => {
      await page.evaluate((target) => {
        history.pushState(null, '', target);
        dispatchEvent(new PopStateEvent('popstate'));
      }, to);
      await settled(page);
    };

    // 1. First sign-in through the set-up link the box printed (and wrote to <data dir>/setup-link).
    const link = fs
      .readFileSync(path.join(server.dataDir, 'setup-link'), 'utf8')
      .trim()
      .replace(/^https?:\/\/[^/]+/, server.url);
    await page.goto(link);
    await page.locator('input[name="new-password"]').fill(PASSWORD);
    await page.locator('input[name="repeat-password"]').fill(PASSWORD);
    await save(page, 'first-sign-in');
    await page.getByRole('button', { name: 'Set the password and sign in' }).click();
    await page.locator('header a.who').waitFor({ state: 'attached' });
    await settled(page);

    // 2. The overview.
    await go('/');
    await save(page, 'overview');

    // 3. Energy: today so far against yesterday and against the baseline.
    const today = siteDay('UTC', new Date());
    await go(`/energy?by=day&from=${today}&to=${addDays(today, 1)}`);
    await page.waitForTimeout(1500);
    await save(page, 'energy-today');
    await page.locator('[data-chart^="energy-baseline-"]').first().scrollIntoViewIfNeeded();
    await save(page, 'energy-today-baseline');

    // 4. A fault reported: its form (kept as a draft while typed).
    await go('/faults');
    await page.getByRole('button', { name: 'Report a fault' }).click();
    await page.getByLabel('Device').fill('AHU 3 supply fan');
    await page.getByLabel('Description').fill('Belt squeals at start; check tension');
    await save(page, 'faults-form');

    // 5. A report scheduled: the template follows the period.
    await go('/reports');
    await page.getByRole('button', { name: 'Schedule a report' }).click();
    await page.getByLabel('Repeat', { exact: true }).selectOption('week');
    await save(page, 'reports-form');

    // 6. Backups: back up now, then the guided restore's confirmation (not confirmed here).
    await go('/admin');
    await page.getByRole('button', { name: 'Back up now' }).click();
    await page.getByText(/^Backup ems-.* taken/).waitFor({ timeout: 60_000 });
    await page
      .getByRole('button', { name: /^Restore the backup / })
      .first()
      .click();
    await page.locator('[data-section="guided-restore"]').scrollIntoViewIfNeeded();
    await save(page, 'admin-restore-confirm');
    await context.close();
  } finally {
    await browser.close();
    await server.close();
  }
}

if (!underFixedClock()) await main();
