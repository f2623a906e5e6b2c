// The energy screen against the API (issue 53 item 2): today against yesterday and last week in kW per 15 minutes with
// the running interval drawn apart (its mean so far, never its partial energy × 4); the areas' energy as stacked bars
// whose legend totals are the API's series, in MWh once the bars pass 1000 kWh; ◀ ▶ moving the period in the URL; a
// range in the URL reopening the same view in a fresh browser; a custom range from the form; CSV and PNG downloads;
// axe in both themes. A site with 4 sub-meters in 4 areas (seedYear, UTC) and today written up to the running interval.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { type SeededYear, seededKwh, seedYear } from '../helpers/seededYear.ts';
import type { TestUser } from '../helpers/server.ts';
import {
  assertNoProblems,
  axeViolations,
  readUntil,
  expectAttribute,
  expectCount,
  expectText,
  expectValue,
  openPage,
  type Rig,
  settled,
  shot,
  signInThroughForm,
  startRig,
} from './rig.ts';

let rig: Rig;
let viewer: TestUser;
let seeded: SeededYear;
/** Today's interval running when the test seeded it, and the site's kW had it been whole. */
let running: { index: number; fullKw: number };

before(async () => {
  rig = await startRig();
  seeded = seedYear(rig.server, 'UTC', { subMeters: 4, days: 40 });
  viewer = await rig.server.createUser({ role: 'viewer', username: 'looker' });
  // Today up to now: whole intervals as the seed writes them, the running one with the energy of its time so far (what
  // the collector holds mid-interval). Too close to an interval's end, first wait for the next one to begin, so that the
  // interval seeded as running is still running when the page draws it.
  const { energy, db } = rig.server.service.deps;
  while (900_000 - (Date.now() % 900_000) < 60_000) await new Promise((resolve) => setTimeout(resolve, 1000));
  const today = siteDay('UTC', new Date());
  const { start, count } = dayIntervals('UTC', today);
  const index = Math.floor((Date.now() - start) / 900_000);
  const elapsed = Math.max((Date.now() - start - index * 900_000) / 900_000, 1 / 15);
  const ids = [seeded.siteId, ...seeded.meterIds];
  db.sqlite.transaction(() => {
    energy.store.save(
      ids.map((meterId, m) => {
        const kwh = new Float32Array(count).fill(Number.NaN);
        for (let i = 0; i <= index; i += 1) kwh[i] = seededKwh(today, i, count, m, ids.length, seeded.lastMonth.from) * (i === index ? elapsed : 1);
        return { meterId, day: today, start, kwh, flags: new Uint8Array(count), maxKw: null, stored: null };
      }),
    );
  })();
  running = { index, fullKw: seededKwh(today, index, count, 0, ids.length, seeded.lastMonth.from) * 4 };

  // The further charts: a PV array, its export meter and a gas meter over the seeded days; the outdoor temperature as the
  // service keeps it (outdoor_days: no gateway asked); a tariff with a contracted peak from the first seeded month on.
  const pv = energy.meters.create({ name: 'PV roof', code: 'meter.pv.kwh', kind: 'energy', commodity: 'electricity', role: 'generation' }, null).id;
  const feedIn = energy.meters.create({ name: 'Feed-in', code: 'meter.export.kwh', kind: 'energy', commodity: 'electricity', role: 'export' }, null).id;
  const gas = energy.meters.create({ name: 'Gas supply', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas' }, null).id;
  const firstDay = addDays(seeded.lastMonth.from, -40);
  const temperatures = db.sqlite.prepare('INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES (?, ?, ?, ?)');
  db.sqlite.transaction(() => {
    for (let day = firstDay, d = 0; day <= addDays(today, 1); day = addDays(day, 1), d += 1) {
      const hourly = new Float32Array(24).map((_, h) => 8 + 6 * Math.sin((2 * Math.PI * d) / 23) + 3 * Math.sin((2 * Math.PI * (h - 9)) / 24));
      temperatures.run('temp.outdoor', day, Buffer.from(hourly.buffer), 240);
      if (day >= today) continue;
      const { start: dayStart, count: n } = dayIntervals('UTC', day);
      const sun = (i: number) => Math.max(0, Math.sin(((i - n / 4) / (n / 2)) * Math.PI)) * (1 + 0.3 * Math.sin(d));
      const rows = [
        { meterId: pv, kwh: new Float32Array(n).map((_, i) => 3 * sun(i)) },
        { meterId: feedIn, kwh: new Float32Array(n).map((_, i) => 3 * sun(i) * 0.35) },
        { meterId: gas, kwh: new Float32Array(n).map((_, i) => 0.4 + 0.3 * Math.cos((i / n) * 2 * Math.PI)) },
      ];
      energy.store.save(rows.map((row) => ({ ...row, day, start: dayStart, flags: new Uint8Array(n), maxKw: null, stored: null })));
    }
  })();
  const keeper = await rig.server.createUser({ role: 'admin', username: 'tariffs' });
  const tariff = await rig.server.request('POST', '/api/energy/tariffs', {
    token: keeper.accessToken,
    body: { validFrom: addDays(seeded.lastMonth.from, -40), price: 0.25, carbonFactor: 0.4, contractedPeakKw: 95 },
  });
  assert.equal(tariff.status, 201, tariff.text);
});
after(() => rig?.close());

const en2 = (value: number) => new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value);
/** One CSV line's fields (quoted fields may hold commas). */
const fields = (line: string) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) => m[1].replace(/^"|"$/g, '').replace(/""/g, '"')).slice(0, -1);
const parse = (text: string | null) => Number((text ?? '').replace(/,/g, ''));

async function series(query: string): Promise<{ start: string; kwh: number | null }[]> {
  const answer = await rig.server.request('GET', `/api/energy/series?${query}`, { token: viewer.accessToken });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.points;
}

async function chartReady(page: Page, name: string): Promise<void> {
  await page.locator(`figure[data-chart^="${name}"] .chart canvas`).first().waitFor();
  await settled(page);
}

/** The areas' legend totals (MWh or kWh as the chart says) against the API's series of each area over [from, to). */
async function assertAreaTotals(page: Page, from: string, to: string, resolution: string): Promise<void> {
  const figure = page.locator(`figure[data-chart="energy-areas-${from}-${to}"]`);
  await figure.locator('.chart canvas').waitFor();
  const unit = await figure.locator('.chart').getAttribute('data-unit');
  let stacked = 0;
  for (const area of seeded.areas) {
    const points = await series(`area=${encodeURIComponent(area)}&from=${from}&to=${to}&resolution=${resolution}`);
    const total = points.reduce((sum, p) => sum + (p.kwh ?? 0), 0);
    stacked = Math.max(stacked, total);
    const factor = unit === 'MWh' ? 1 / 1000 : 1;
    await expectText(figure.locator(`tr[data-series="${area}"] [data-field="total"]`), en2(total * factor), `${area} ${from}..${to}`);
  }
  assert.ok(unit === 'MWh' || unit === 'kWh', `unit ${unit}`);
}

test('today against yesterday and last week: the API’s kW, the running interval apart; area bars, ◀ ▶ and the URL', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/energy`);
  await signInThroughForm(page, 'looker', viewer.password);
  await page.getByRole('link', { name: 'Energy', exact: true }).waitFor();
  await chartReady(page, 'energy-today');

  // 1. Yesterday and last week in kW = kWh × 4, statistics and table as the API's 15-minute series.
  const today = siteDay('UTC', new Date());
  const todayFigure = page.locator('figure[data-chart="energy-today"]');
  await expectAttribute(todayFigure.locator('.chart'), 'data-unit', 'kW');
  for (const [label, day] of [
    ['Yesterday', addDays(today, -1)],
    ['Same weekday last week', addDays(today, -7)],
  ] as const) {
    const points = await series(`from=${day}&to=${addDays(day, 1)}&resolution=15min`);
    const kw = points.map((p) => (p.kwh ?? 0) * 4);
    const row = todayFigure.locator(`tr[data-series="${label}"]`);
    await expectText(row.locator('[data-field="max"]'), en2(Math.max(...kw)), `${label} max`);
    await expectText(row.locator('[data-field="min"]'), en2(Math.min(...kw)), `${label} min`);
    await expectText(row.locator('[data-field="total"]'), en2(points.reduce((s, p) => s + (p.kwh ?? 0), 0)), `${label} total kWh`);
  }
  // Today: whole intervals as the API has them; the running one is not in "Today" but drawn apart at its mean so far.
  const todayPoints = await series(`from=${today}&to=${addDays(today, 1)}&resolution=15min`);
  const partial = todayPoints[running.index].kwh!;
  assert.ok(partial > 0, 'the running interval has its partial energy');
  await todayFigure.locator('summary').click();
  await todayFigure.locator('table[data-table="energy-today"] tbody tr').first().waitFor();
  const rows = todayFigure.locator('table[data-table="energy-today"] tbody tr');
  const cells = async (i: number) => rows.nth(i).locator('td').allTextContents();
  const [todayCell, runningCell] = await cells(running.index);
  assert.equal(todayCell, '–', 'the running interval is not drawn as a whole one');
  assert.ok(parse(runningCell) >= partial * 4 - 0.01, `running ${runningCell} kW is its mean so far, not a drop to ${partial * 4}`);
  assert.ok(parse(runningCell) <= running.fullKw + 0.01, `running ${runningCell} kW: its energy over the time so far (whole: ${running.fullKw})`);
  if (running.index > 0) {
    const [whole, joined] = await cells(running.index - 1);
    assert.equal(whole, en2(todayPoints[running.index - 1].kwh! * 4), 'the last whole interval');
    assert.equal(joined, whole, 'the dashed line starts at the last whole interval');
  }
  if (running.index + 1 < todayPoints.length) assert.equal((await cells(running.index + 1))[0], '–', 'nothing drawn ahead of now');
  await shot(page, 'energy-today-1280x800-light');

  // 2. This week by area (the default), then a past week from the URL; ◀ ▶ step a week, the URL follows.
  const week = new URL(page.url());
  await page.goto(`${rig.server.url}/energy?by=week&from=${addDays(today, -21)}&to=${addDays(today, -14)}`);
  await chartReady(page, 'energy-areas');
  let from = new URL(page.url()).searchParams.get('from')!;
  let to = new URL(page.url()).searchParams.get('to')!;
  assert.equal(new Date(`${from}T00:00:00Z`).getUTCDay(), 1, 'a week starts on Monday');
  assert.equal(to, addDays(from, 7));
  await assertAreaTotals(page, from, to, 'day');
  await expectAttribute(page.locator('figure[data-chart^="energy-areas"] .chart'), 'data-unit', 'MWh', 'a week of bars reads in MWh');
  await shot(page, 'energy-areas-week-1280x800-light');
  await page.getByRole('button', { name: 'Previous period' }).click();
  await page.waitForURL((url) => url.searchParams.get('from') === addDays(from, -7));
  await assertAreaTotals(page, addDays(from, -7), addDays(to, -7), 'day');
  await page.getByRole('button', { name: 'Next period' }).click();
  await page.getByRole('button', { name: 'Next period' }).click();
  await page.waitForURL((url) => url.searchParams.get('from') === addDays(from, 7) && url.searchParams.get('by') === 'week');
  await assertAreaTotals(page, addDays(from, 7), addDays(to, 7), 'day');

  // Month and year: the buttons keep the period around the first day shown; a month steps by a month.
  await page.getByRole('button', { name: 'Month', exact: true }).click();
  await page.waitForURL((url) => url.searchParams.get('by') === 'month');
  from = new URL(page.url()).searchParams.get('from')!;
  to = new URL(page.url()).searchParams.get('to')!;
  assert.match(from, /-01$/);
  await assertAreaTotals(page, from, to, 'day');
  await page.getByRole('button', { name: 'Previous period' }).click();
  await page.waitForURL((url) => url.searchParams.get('to') === from);
  await page.getByRole('button', { name: 'Year', exact: true }).click();
  await page.waitForURL((url) => url.searchParams.get('by') === 'year');
  from = new URL(page.url()).searchParams.get('from')!;
  to = new URL(page.url()).searchParams.get('to')!;
  await assertAreaTotals(page, from, to, 'month');
  await shot(page, 'energy-areas-year-1280x800-light');

  // A custom range through the form: the URL says by=range, the last day included.
  const first = addDays(today, -10);
  const last = addDays(today, -4);
  await page.locator('input[name="from"]').fill(first);
  await page.locator('input[name="last"]').fill(last);
  await page.getByRole('button', { name: 'Show range' }).click();
  await page.waitForURL(
    (url) => url.searchParams.get('by') === 'range' && url.searchParams.get('from') === first && url.searchParams.get('to') === addDays(last, 1),
  );
  await assertAreaTotals(page, first, addDays(last, 1), 'day');
  // Backwards: refused with the reason, nothing sent.
  await page.locator('input[name="last"]').fill(addDays(first, -1));
  await page.getByRole('button', { name: 'Show range' }).click();
  await page.getByText('The last day is before the first day.').waitFor();
  assert.equal(new URL(page.url()).searchParams.get('from'), first);
  assert.ok(week.pathname === '/energy');
  assertNoProblems(problems, 'energy');
  await context.close();
});

test('a range in the URL reopens the same view in a fresh browser; CSV and PNG downloads; axe in both themes', async () => {
  const today = siteDay('UTC', new Date());
  const from = addDays(today, -30);
  const to = addDays(today, -2);
  const link = `/energy?by=range&from=${from}&to=${to}`;
  for (const colorScheme of ['light', 'dark'] as const) {
    const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}${link}`, { colorScheme, width: 1920, height: 1080 });
    await signInThroughForm(page, 'looker', viewer.password);
    await chartReady(page, 'energy-areas');
    assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, link, 'the link is kept');
    await assertAreaTotals(page, from, to, 'day');
    await expectValue(page.locator('input[name="from"]'), from);
    await expectValue(page.locator('input[name="last"]'), addDays(to, -1));
    await page.locator('figure[data-chart^="energy-areas"] summary').click();
    await page.locator(`table[data-table="energy-areas-${from}-${to}"] tbody tr`).first().waitFor();
    await expectCount(page.locator(`table[data-table="energy-areas-${from}-${to}"] tbody tr`), 28, 'a row per day');
    assert.deepEqual((await axeViolations(page)).join('\n'), '', `axe ${colorScheme}`);
    await shot(page, `energy-range-1920x1080-${colorScheme}`);
    if (colorScheme === 'light') {
      const areas = page.locator('figure[data-chart^="energy-areas"]');
      const [csv] = await Promise.all([page.waitForEvent('download'), areas.getByRole('button', { name: 'CSV' }).click()]);
      const text = fs.readFileSync((await csv.path())!, 'utf8');
      const lines = text.trim().split('\n');
      assert.equal(lines.length, 29, 'header and a row per day');
      assert.match(lines[0], /^start \(UTC\),time,/);
      const points = await series(`area=${encodeURIComponent(seeded.areas[0])}&from=${from}&to=${to}&resolution=day`);
      const column = fields(lines[0]).findIndex((h) => h.startsWith(seeded.areas[0]));
      assert.ok(column > 1, 'a column per area');
      assert.equal(Number(fields(lines[1])[column]), +points[0].kwh!.toFixed(4), 'the CSV holds the API’s kWh');
      const [png] = await Promise.all([page.waitForEvent('download'), areas.getByRole('button', { name: 'PNG' }).click()]);
      const bytes = fs.readFileSync((await png.path())!);
      assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');
      assert.ok(bytes.length > 2000, 'with the chart in it');
      // Reset zoom: off until the chart is zoomed, then back to the whole range.
      const reset = areas.getByRole('button', { name: 'Reset zoom' });
      assert.equal(await reset.isDisabled(), true);
      const box = (await areas.locator('.u-over').boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
      await page.waitForFunction(
        () => !(document.querySelector('figure[data-chart^="energy-areas"] [data-action="reset-zoom"]') as HTMLButtonElement).disabled,
      );
      await reset.click();
      await page.waitForFunction(() => (document.querySelector('figure[data-chart^="energy-areas"] [data-action="reset-zoom"]') as HTMLButtonElement).disabled);
    }
    assertNoProblems(problems, `energy ${colorScheme}`);
    await context.close();
  }
  // A link with a bad range says why and shows this week.
  const { page, context } = await openPage(rig.browser, `${rig.server.url}/energy?by=range&from=${to}&to=${from}`);
  await signInThroughForm(page, 'looker', viewer.password);
  await page.getByText('The range needs a first and a last day (from, to), the last not before the first.').waitFor();
  // A period before the first data: said in words, not an empty chart alone.
  await page.goto(`${rig.server.url}/energy?by=month&from=2001-01-01&to=2001-02-01`);
  await page.locator('figure[data-chart="energy-areas-2001-01-01-2001-02-01"] [data-field="no-data"]').waitFor();
  await context.close();
});

test('the charts are their own chunk: the overview loads no chart code; from the menu the energy screen loads it; a phone does not scroll sideways', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/`, { width: 390, height: 844 });
  const files: string[] = [];
  page.on('response', (response) => {
    if (/\.(js|css)$/.test(response.url())) files.push(new URL(response.url()).pathname);
  });
  await signInThroughForm(page, 'looker', viewer.password);
  await settled(page);
  assert.ok(!files.some((file) => /Energy|uPlot/.test(file)), `the overview loads no chart code: ${files}`);
  await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('link', { name: 'Energy', exact: true }).click();
  await chartReady(page, 'energy-areas');
  assert.ok(files.some((file) => /Energy/.test(file)) && files.some((file) => /uPlot/.test(file)), `the energy screen brings its chunk and uPlot: ${files}`);
  const wide = await page.evaluate(() =>
    [...document.querySelectorAll('main *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)
      .slice(0, 8),
  );
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0, `nothing scrolls sideways at 390 px: ${wide}`);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on a phone');
  await shot(page, 'energy-390x844-light');
  assertNoProblems(problems, 'energy on a phone');
  await context.close();
});

test('per-person language and theme: set on the account screen, kept on the server, a second device signs in to them; the browser’s until set', async () => {
  // An admin: the most links in the header (the German header at 1280 px used to wrap to two lines).
  const person = await rig.server.createUser({ role: 'admin', username: 'polyglot' });
  const admin = await rig.server.createUser({ role: 'admin', username: 'keeper' });
  // Before any choice: the browser's language (French here) and colour scheme.
  const first = await openPage(rig.browser, `${rig.server.url}/account`, { locale: 'fr-FR', colorScheme: 'light' });
  await signInThroughForm(first.page, 'polyglot', person.password);
  await first.page.locator('form[data-form="preferences"]').waitFor();
  assert.equal(await first.page.getAttribute('html', 'lang'), 'fr');
  assert.equal(await first.page.getAttribute('html', 'data-theme'), 'light');
  await first.page.locator('select[name="language"]').selectOption('de');
  await first.page.locator('select[name="theme"]').selectOption('dark');
  await first.page.locator('form[data-form="preferences"] button[type="submit"]').click();
  await first.page.waitForFunction(() => document.documentElement.lang === 'de' && document.documentElement.dataset.theme === 'dark');
  await first.page.getByText('Für Ihr Konto gespeichert.').waitFor();
  const me = await rig.server.request('GET', `/api/users/${person.user.id}`, { token: admin.accessToken });
  assert.deepEqual([me.body.language, me.body.theme], ['de', 'dark'], 'kept on the server');
  assert.deepEqual((await axeViolations(first.page)).join('\n'), '', 'axe on the account screen (dark, German)');
  assertNoProblems(first.problems, 'account');
  await first.context.close();

  // Another device: an English browser with a light scheme and no local choice opens in German and dark once signed in.
  const second = await openPage(rig.browser, `${rig.server.url}/`, { locale: 'en-US', colorScheme: 'light' });
  assert.equal(await second.page.getAttribute('html', 'lang'), 'en', 'before sign-in: the browser’s');
  await signInThroughForm(second.page, 'polyglot', person.password);
  await second.page.waitForFunction(() => document.documentElement.lang === 'de' && document.documentElement.dataset.theme === 'dark');
  // German links do not fit beside the name and the tools at 1280 px: the header takes the menu, one line high.
  await second.page.locator('header.top.compact').waitFor();
  const height = await second.page.evaluate(() => document.querySelector('header.top')!.getBoundingClientRect().height);
  assert.ok(height < 70, `the German header is one line at 1280 px: ${height} px`);
  await second.page.getByRole('button', { name: 'Menü' }).click();
  await second.page.getByRole('link', { name: 'Energie', exact: true }).waitFor();
  // Back to the browser's language: English again at once.
  await second.page.goto(`${rig.server.url}/account`);
  await second.page.locator('select[name="language"]').selectOption('');
  await second.page.locator('form[data-form="preferences"] button[type="submit"]').click();
  await second.page.waitForFunction(() => document.documentElement.lang === 'en');
  const after = await rig.server.request('GET', `/api/users/${person.user.id}`, { token: admin.accessToken });
  assert.deepEqual([after.body.language, after.body.theme], [null, 'dark']);
  assertNoProblems(second.problems, 'second device');
  await second.context.close();
});

/**
 * A legend figure (2 decimals) against a figure the API rounds to 3: within the display's half-cent plus the API's
 * rounding (equality of the two roundings would fail whenever the value lies just below a half-cent).
 */
async function assertShows(read: () => Promise<string | null>, value: number, what: string): Promise<void> {
  const near = (text: string | null) => text !== null && text !== '–' && Math.abs(parse(text) - value) <= 0.0051;
  const text = await readUntil(read, near);
  assert.ok(near(text), `${what}: shows ${text}, the API ${value}`);
}

/** A chart's legend row: its total (or max) as the page shows it. */
async function legend(page: Page, chart: string, series: string, field = 'total'): Promise<string | null> {
  return page.locator(`figure[data-chart="${chart}"] tr[data-series="${series}"] [data-field="${field}"]`).textContent();
}

test('against the baseline, the energy flow, the demand profile and each commodity: every figure the API’s; CSV; axe in both themes', async () => {
  const today = siteDay('UTC', new Date());
  // Last week, whole: Monday to Monday.
  const monday = addDays(today, -((new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7) - 7);
  const [from, to] = [monday, addDays(monday, 7)];
  const opened = Date.now();
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/energy?by=week&from=${from}&to=${to}`);
  await signInThroughForm(page, 'looker', viewer.password);
  const get = async (path: string) => {
    const answer = await rig.server.request('GET', path, { token: viewer.accessToken });
    assert.equal(answer.status, 200, `${path}: ${answer.text}`);
    return answer.body;
  };

  // 1. Against the baseline: actual and expected totals are the hourly baseline's report (fitted on the 28 days before).
  const baselineChart = `energy-baseline-${from}-${to}`;
  await chartReady(page, baselineChart);
  const baseline = await get(`/api/analysis/baseline/hourly?baselineFrom=${addDays(from, -28)}&baselineTo=${from}&reportFrom=${from}&reportTo=${to}`);
  await assertShows(() => legend(page, baselineChart, 'Actual'), baseline.report.actualKwh, 'actual');
  await assertShows(() => legend(page, baselineChart, 'Expected (baseline)'), baseline.report.expectedKwh, 'expected');
  await page.locator(`figure[data-chart="${baselineChart}"] summary`).click();
  await page.locator(`figure[data-chart="${baselineChart}"] table[data-table] tbody tr`).first().waitFor();
  await expectCount(page.locator(`figure[data-chart="${baselineChart}"] table[data-table] tbody tr`), baseline.report.hours.length, 'an hour a row');
  // Today so far: the hours that have ended, against the baseline, as the API answers them; before the first whole hour
  // of the day (just after midnight) the period of today says so in words.
  await page.goto(`${rig.server.url}/energy?by=day&from=${today}&to=${addDays(today, 1)}`);
  const todayChart = `energy-baseline-${today}-${addDays(today, 1)}`;
  const soFar = await get(
    `/api/analysis/baseline/hourly?baselineFrom=${addDays(today, -28)}&baselineTo=${today}&reportFrom=${today}&reportTo=${addDays(today, 1)}`,
  );
  // (An hour that ends between the API's answer and the page's may already be drawn.)
  if (soFar.report.hours.length === 0)
    await page
      .locator(`[data-chart="${todayChart}"] [data-field="no-data"]`)
      .or(page.locator(`figure[data-chart="${todayChart}"]`))
      .first()
      .waitFor();
  else {
    await chartReady(page, todayChart);
    await page.locator(`figure[data-chart="${todayChart}"] summary`).click();
    const rows = page.locator(`figure[data-chart="${todayChart}"] table[data-table] tbody tr`);
    // An hour may end between the API's answer and the page's: one more row, never fewer.
    const count = await readUntil(
      () => rows.count(),
      (n) => [0, 1].includes(n - soFar.report.hours.length),
    );
    assert.ok([0, 1].includes(count - soFar.report.hours.length), `${count} rows for ${soFar.report.hours.length} hours`);
  }
  await page.goBack();

  // 2. The energy flow: each total the commodities balance's.
  const flowChart = `energy-flow-${from}-${to}`;
  await chartReady(page, flowChart);
  const figures = await get(`/api/energy/commodities?from=${from}&to=${to}`);
  const b = figures.electricity;
  assert.ok(b.generationKwh > 0 && b.exportKwh > 0, 'the site has PV and export');
  for (const [label, value] of [
    ['From the grid', b.importKwh],
    ['Own PV used', b.selfConsumptionKwh],
    ['PV generated', b.generationKwh],
    ['Fed into the grid', b.exportKwh],
  ] as const) {
    // The legend reads MWh once the stack passes 1000 kWh.
    const unit = await page.locator(`figure[data-chart="${flowChart}"] .chart`).getAttribute('data-unit');
    await assertShows(() => legend(page, flowChart, label), unit === 'MWh' ? value / 1000 : value, label);
  }
  await expectText(page.locator('[data-field="energy.consumption"]'), `${en2(b.consumptionKwh)} kWh`, 'the balance as the API has it');

  // 3. The demand profile of the billing month holding the period's first day: its peak the peaks route's, the contract 95 kW.
  const month = from.slice(0, 7);
  const demandChart = `energy-demand-${month}`;
  await chartReady(page, demandChart);
  const peaks = await get(`/api/energy/peaks?month=${month}`);
  await assertShows(() => legend(page, demandChart, 'Demand', 'max'), peaks.site.kw, 'the highest 15 minutes');
  await assertShows(() => legend(page, demandChart, 'Month’s peak', 'max'), peaks.site.kw, 'the peak marked');
  await expectText(page.locator('[data-field="demand-note"]'), /Contracted peak: 95\.00 kW/);
  // The mean over the month's finished intervals: the whole 15-minute series is the API's, in kW.
  const monthPoints = await series(`from=${month}-01&to=${addDays(`${month}-01`, 40).slice(0, 7)}-01&resolution=15min`);
  // An interval over by the time the page drew (after `opened`) or by now: a boundary may pass in between.
  const meanBy = (at: number) => {
    const finished = monthPoints.filter((p) => p.kwh !== null && Date.parse(p.start) + 900_000 <= at).map((p) => p.kwh! * 4);
    return en2(finished.reduce((a, v) => a + v, 0) / finished.length);
  };
  const shown = await readUntil(
    () => legend(page, demandChart, 'Demand', 'mean'),
    (text) => [meanBy(opened), meanBy(Date.now())].includes(text!),
  );
  assert.ok([meanBy(opened), meanBy(Date.now())].includes(shown!), `mean ${shown} kW: ${meanBy(opened)} or ${meanBy(Date.now())}`);

  // 4. By commodity, side by side in their units: electricity's consumption and the gas m³ are the commodities route's.
  for (const commodity of figures.commodities as { commodity: string; unit: string; quantity: number }[]) {
    const chart = `energy-commodity-${commodity.commodity}-${from}-${to}`;
    await chartReady(page, chart);
    const unit = await page.locator(`figure[data-chart="${chart}"] .chart`).getAttribute('data-unit');
    if (commodity.commodity === 'gas') assert.equal(unit, 'm³', 'gas stays in m³');
    const label = commodity.commodity === 'gas' ? 'Gas' : 'Electricity';
    await assertShows(() => legend(page, chart, label), unit === 'MWh' ? commodity.quantity / 1000 : commodity.quantity, `${label} total`);
  }
  assert.deepEqual(
    (figures.commodities as { commodity: string }[]).map((c) => c.commodity),
    ['electricity', 'gas'],
  );
  const gasChart = page.locator(`figure[data-chart="energy-commodity-gas-${from}-${to}"]`);
  const [csv] = await Promise.all([page.waitForEvent('download'), gasChart.getByRole('button', { name: 'CSV' }).click()]);
  const lines = fs
    .readFileSync((await csv.path())!, 'utf8')
    .trim()
    .split('\n');
  assert.equal(fields(lines[0])[2], 'Gas (m³)');
  const gasDays = await series(
    `meterId=${(figures.commodities as { commodity: string; meters: { id: number }[] }[]).find((c) => c.commodity === 'gas')!.meters[0].id}&from=${from}&to=${to}&resolution=day`,
  );
  assert.equal(Number(fields(lines[1])[2]), +gasDays[0].kwh!.toFixed(4), 'the CSV holds the meter’s m³');

  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe dark');
  await shot(page, 'energy-more-1280x800-dark');
  assertNoProblems(problems, 'energy charts');
  await context.close();
});
