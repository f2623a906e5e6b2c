// Weather-normalised month-on-month change (issue 41 item 7) and the holiday rules of the degree-day model (item 10).
// Known answer by construction: a site meter whose every day is exactly E = 400 + 120·HDD + 200·CDD − 150·weekend kWh
// (the outdoor temperature constant within each day, so HDD and CDD are exact), 5 % more from the 1st of this month
// (a change in the building). The model fitted on the 365 days before a month recovers the generator exactly, so the
// test computes the IPMVP routine adjustment with the generator's own coefficients, independently of the product:
// last month against the month before: 0.00 % (the raw change is the weather's); this month so far: +5.00 %.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, daysBetween, siteDay } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';
import { fitDayModel } from '../../src/analysis/baselines.ts';
import { runTool } from '../helpers/tools.ts';
import path from 'node:path';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { pdfText, runReportNow } from '../helpers/reportRun.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { lastWholeMonth } from '../helpers/seededYear.ts';

const today = siteDay('UTC', new Date());
const thisMonth = `${today.slice(0, 7)}-01`;
const lastMonth = lastWholeMonth('UTC');
const monthBefore = { from: `${addDays(lastMonth.from, -1).slice(0, 7)}-01`, to: lastMonth.from };
const first = addDays(monthBefore.from, -400);

/** The day's outdoor temperature (°C, as stored: Float32), a season and a weather wobble. */
function temperature(day: string): number {
  const t = Date.parse(`${day}T00:00:00Z`) / 86_400_000;
  return Math.fround(11 - 10 * Math.cos((2 * Math.PI * (t - 20)) / 365.25) + 3 * Math.sin(t * 1.7));
}
const isWeekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
const hdd = (day: string) => Math.max(0, 15.5 - temperature(day));
const cdd = (day: string) => Math.max(0, temperature(day) - 21);
/** The generator's model: what the building uses on a day before it changed. */
const model = (day: string) => 400 + 120 * hdd(day) + 200 * cdd(day) - 150 * (isWeekend(day) ? 1 : 0);
const factor = (day: string) => (day >= thisMonth ? 1.05 : 1);
/** What the store holds: 96 Float32 intervals of a 96th of the day each. */
const stored = (day: string) => 96 * Math.fround((model(day) * factor(day)) / 96);

/** The routine adjustment by hand over whole days [from, to) of each period. */
function byHand(current: { from: string; to: string }, previous: { from: string; to: string }) {
  const sum = (range: { from: string; to: string }, f: (day: string) => number) => daysBetween(range.from, range.to).reduce((s, d) => s + f(d), 0);
  const adjusted = sum(previous, stored) + sum(current, model) - sum(previous, model);
  const kwh = sum(current, stored) - adjusted;
  return { kwh, percent: (kwh / adjusted) * 100, adjusted, rawPercent: ((sum(current, stored) - sum(previous, stored)) / sum(previous, stored)) * 100 };
}

describe('weather-normalised month-on-month change', () => {
  let server: TestServer;
  let token: string;
  const get = async (path: string) => {
    const response = await server.request('GET', path, { token });
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    return response.body;
  };
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const { energy, db } = server.service.deps;
    const main = energy.meters.create({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id;
    const insert = db.sqlite.prepare('INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES (?, ?, ?, ?)');
    db.sqlite.transaction(() => {
      for (let day = first; day < today; day = addDays(day, 1)) {
        const rows: DayRecord[] = [
          {
            meterId: main,
            day,
            start: Date.parse(`${day}T00:00:00Z`),
            kwh: new Float32Array(96).fill((model(day) * factor(day)) / 96),
            flags: new Uint8Array(96),
            maxKw: null,
          },
        ];
        energy.store.save(rows);
        insert.run('temp.outdoor', day, Buffer.from(new Float32Array(24).fill(temperature(day)).buffer), 240);
      }
    })();
  });
  after(() => server?.close());

  test('last month against the month before: the raw change is the weather, the normalised change 0.00 %', async () => {
    const answer = await get(`/api/analysis/compare?period=month&at=${lastMonth.from}`);
    const hand = byHand(lastMonth, monthBefore);
    const normalised = answer.weatherNormalised;
    assert.equal(normalised.withheld, null, normalised.withheld);
    assert.ok(Math.abs(normalised.kwh - hand.kwh) < 0.5, `${normalised.kwh} vs ${hand.kwh}`);
    assert.ok(Math.abs(normalised.kwh) < 0.5, `${normalised.kwh}: the building did not change`);
    assert.ok(Math.abs(normalised.percent) <= 0.01, `${normalised.percent}`);
    assert.ok(Math.abs(normalised.adjustedPreviousKwh - hand.adjusted) < 0.5);
    // The raw change beside it is the weather's alone (months apart in HDD): the product's, as by hand.
    assert.ok(Math.abs(answer.change.previous.percent - hand.rawPercent) < 0.01, `${answer.change.previous.percent} vs ${hand.rawPercent}`);
    assert.ok(Math.abs(answer.change.previous.percent) > 1, `raw ${answer.change.previous.percent}: the months' weather differs`);
    // The model is the generator's (4 terms: no holiday term without holidays), fitted on the 365 days before the month.
    assert.equal(normalised.model.from, addDays(lastMonth.from, -365));
    assert.equal(normalised.model.to, lastMonth.from);
    assert.deepEqual(normalised.model.fitted, ['intercept', 'perHdd', 'perCdd', 'weekend']);
    assert.ok(Math.abs(normalised.model.coefficients.perHdd - 120) < 0.01, JSON.stringify(normalised.model));
    assert.ok(Math.abs(normalised.model.coefficients.weekend + 150) < 0.01);
    assert.equal(normalised.current.days, daysBetween(lastMonth.from, lastMonth.to).length);
    assert.equal(normalised.previous.days, daysBetween(monthBefore.from, monthBefore.to).length);
  });

  test('this month so far (whole days) against as many days of last month: +5.00 %, the change made on the 1st', async (t) => {
    if (today === thisMonth) return t.skip('the 1st of a month: no whole day of it yet');
    const answer = await get('/api/analysis/compare?period=month');
    const current = { from: thisMonth, to: today };
    const previous = { from: lastMonth.from, to: addDays(lastMonth.from, daysBetween(thisMonth, today).length) };
    const hand = byHand(current, previous);
    const normalised = answer.weatherNormalised;
    assert.equal(normalised.withheld, null, normalised.withheld);
    assert.deepEqual(
      [normalised.current.from, normalised.current.to, normalised.previous.to],
      [current.from, current.to, [previous.to, lastMonth.to].sort()[0]],
    );
    assert.ok(Math.abs(normalised.kwh - hand.kwh) < 0.5, `${normalised.kwh} vs ${hand.kwh}`);
    assert.ok(Math.abs(normalised.percent - 5) <= 0.01, `${normalised.percent}`);
    // The overview's month line carries the same figure beside the raw one.
    const stats = await get('/api/overview/stats');
    assert.equal(stats.comparison.monthVsPreviousWeatherNormalisedPercent, normalised.percent);
  });

  test('the monthly report: the normalised change under the raw one; a year-earlier month without a demand price is compared (issue 41 item 10c)', async () => {
    // A demand price from the month before last on: last month's reference a year earlier had data but no demand price.
    const created = await server.request('POST', '/api/energy/tariffs', {
      token,
      body: { validFrom: monthBefore.from, price: 0.2, carbonFactor: 0.25, standingChargePerDay: 1, demandChargePerKw: 4, note: 'bill' },
    });
    assert.equal(created.status, 201, created.text);
    const { ReportContentBuilder } = await import('../../src/reporting/reports/content.ts');
    const { siteEnergyFigures } = await import('../helpers/reportEnergy.ts');
    const { deps } = server.service;
    const builder = new ReportContentBuilder(deps.db, siteEnergyFigures(deps.db, deps.energy.figures), deps.analysis, () => true, deps.energy.commodities);
    const content = builder.build('monthly-energy', 'Normalised', Date.parse(`${lastMonth.to}T12:00:00Z`));
    const comparison = content.comparison!;
    assert.ok(Math.abs(comparison.weatherNormalised!.percent!) <= 0.01, JSON.stringify(comparison.weatherNormalised));
    // A year earlier: data, no demand price → demand charge 0 and total cost = its energy cost (was null: "no data to compare").
    assert.equal(comparison.lastYear.hasData, true);
    assert.equal(comparison.lastYear.demandCharge, 0);
    assert.equal(comparison.lastYear.totalCost, comparison.lastYear.cost);
    assert.ok(comparison.current.totalCost! > comparison.current.cost, 'this month carries its demand charge');

    const admin = await server.createUser({ role: 'admin' });
    const { file } = await runReportNow(server, admin.accessToken, {
      name: 'Monthly',
      templateId: 'monthly-energy',
      cron: '0 6 1 * *',
      recipients: ['energy@example.test'],
    });
    const outDir = process.env.EMS_REPORT_PNG_DIR ?? tempDir('ems-report-normalised-');
    const pdfFile = path.join(outDir, 'normalised.pdf');
    await pdfText(await file('.pdf'), pdfFile);
    const cover = (await runTool('pdftotext', ['-layout', '-f', '1', '-l', '1', pdfFile, '-'])).replace(/\s+/g, ' ');
    const format = new SiteFormat({ locale: 'en-GB', timezone: 'UTC', currency: 'EUR' });
    const before = format.month(monthBefore.from.slice(0, 7));
    const yearEarlier = format.month(`${Number(lastMonth.from.slice(0, 4)) - 1}${lastMonth.from.slice(4, 7)}`);
    for (const expected of [
      `${format.change(comparison.weatherNormalised!.percent! / 100)} weather-normalised vs ${before} (degree-day model, ${comparison.weatherNormalised!.current!.days} days)`,
      `was 0, no percentage vs same period last year (${yearEarlier})`,
      'Data completeness',
    ])
      assert.ok(cover.includes(expected), `cover has "${expected}":\n${cover}`);
    // Total cost against the year-earlier month: a change, not "no data to compare".
    const totalCost = cover.slice(cover.indexOf('Total cost'), cover.indexOf('Electricity carbon'));
    assert.ok(!totalCost.includes('no data to compare'), totalCost);
    const change = (comparison.current.totalCost! - comparison.lastYear.totalCost!) / comparison.lastYear.totalCost!;
    assert.ok(totalCost.includes(`${format.change(change)} vs same period last year (${yearEarlier})`), totalCost);
    await runTool('pdftoppm', ['-png', '-r', '70', '-f', '1', '-l', '1', pdfFile, path.join(outDir, 'normalised')]);

    // A long plan name is set smaller, whole, instead of cut ("Energy manager check monthly-ene…" in the review).
    const { renderPdf } = await import('../../src/reporting/reports/renderPdf.ts');
    const title = 'Energy manager check monthly-energy';
    const longFile = path.join(outDir, 'long-title.pdf');
    await pdfText(await renderPdf({ ...content, title }), longFile);
    const longCover = await runTool('pdftotext', ['-layout', '-f', '1', '-l', '1', longFile, '-']);
    assert.ok(longCover.includes(title), longCover.slice(0, 400));
    await runTool('pdftoppm', ['-png', '-r', '70', '-f', '1', '-l', '1', longFile, path.join(outDir, 'long-title')]);
  });

  test('a custom period a year earlier: the same weekdays 364 days back, as period=day (issue 41 item 10e)', async () => {
    const day = addDays(lastMonth.from, 5);
    const custom = await get(`/api/analysis/compare?period=custom&from=${day}&to=${addDays(day, 1)}`);
    const single = await get(`/api/analysis/compare?period=day&at=${day}`);
    assert.deepEqual([custom.lastYear.from, custom.lastYear.to], [addDays(day, -364), addDays(day, -363)]);
    assert.equal(new Date(`${custom.lastYear.from}T00:00:00Z`).getUTCDay(), new Date(`${day}T00:00:00Z`).getUTCDay(), 'the same weekday');
    assert.equal(custom.lastYear.kwh, single.lastYear.kwh);
    assert.ok(Math.abs(custom.lastYear.kwh - stored(addDays(day, -364))) < 0.002, `${custom.lastYear.kwh} vs ${stored(addDays(day, -364))}`);
    // A calendar month keeps the calendar month a year earlier.
    const month = await get(`/api/analysis/compare?period=month&at=${lastMonth.from}`);
    assert.equal(month.lastYear.from, `${Number(lastMonth.from.slice(0, 4)) - 1}${lastMonth.from.slice(4)}`);
  });

  test('hourly baseline guard rails (issue 41): 28 days of the month before, reported on last month, give no savings figure, with the reasons', async () => {
    // The building did not change before this month: true savings 0. A 28-day baseline cannot say so for another month.
    const short = await get(
      `/api/analysis/baseline/hourly?baselineFrom=${monthBefore.from}&baselineTo=${addDays(monthBefore.from, 28)}&reportFrom=${lastMonth.from}&reportTo=${lastMonth.to}`,
    );
    assert.equal(short.report.savingsKwh, null, `savings ${short.report.savingsKwh} (before: a number)`);
    assert.equal(short.report.savingsPercent, null);
    assert.equal(short.guardRails.defensible, false);
    assert.equal(short.guardRails.checks.length.pass, false);
    assert.match(short.report.savingsWithheld, /covers 1 of the 12 calendar months/);
    // Last month is colder than those 28 days: its heating degree-hours lie outside the baseline's range.
    const heat = short.guardRails.checks.ranges.variables.find((v: { variable: string }) => v.variable === 'heating degree hours');
    const baseHdd = daysBetween(monthBefore.from, addDays(monthBefore.from, 28)).map(hdd);
    const [min, max] = [Math.min(...baseHdd), Math.max(...baseHdd)];
    const slack = (max - min) * 0.1;
    const hand = daysBetween(lastMonth.from, lastMonth.to).filter((d) => hdd(d) > max + slack + 1e-6 || hdd(d) < min - slack - 1e-6);
    assert.equal(heat.outside, hand.length * 24, `hours outside: ${heat.outside}, by hand ${hand.length} days × 24`);
    // A year's baseline on last month: every check holds and the figure is given, ~0 (the generator's model exactly).
    const year = await get(
      `/api/analysis/baseline/hourly?baselineFrom=${addDays(lastMonth.from, -365)}&baselineTo=${lastMonth.from}&reportFrom=${lastMonth.from}&reportTo=${lastMonth.to}`,
    );
    assert.equal(year.guardRails.defensible, true, year.report.savingsWithheld);
    assert.ok(Math.abs(year.report.savingsKwh) < 1, `${year.report.savingsKwh}`);
    assert.ok(year.report.uncertainty.at68.kwh >= 0);
  });

  test('no figure the data cannot defend: a baseline of a few months, a day without temperature, another period kind', async () => {
    // December a year before: the 365 days before it hold ~100 days of data.
    const early = await get(`/api/analysis/compare?period=month&at=${addDays(first, 100).slice(0, 7)}-01`);
    assert.equal(early.weatherNormalised.kwh, null);
    assert.equal(early.weatherNormalised.percent, null);
    assert.match(early.weatherNormalised.withheld, /data on \d+(\.\d)? % of its 365 days|too few to fit/);
    assert.equal((await get(`/api/analysis/compare?period=day&at=${lastMonth.from}`)).weatherNormalised, null);
    // A day of last month without a kept outdoor temperature: withheld, naming it (the kept answer is dropped).
    const gap = addDays(lastMonth.from, 3);
    server.service.deps.db.sqlite.prepare('DELETE FROM outdoor_days WHERE day = ?').run(gap);
    const answer = await get(`/api/analysis/compare?period=month&at=${lastMonth.from}`);
    assert.equal(answer.weatherNormalised.kwh, null);
    assert.match(answer.weatherNormalised.withheld, new RegExp(`1 of \\d+ days of the current period .*${gap}`));
    assert.notEqual(answer.change.previous.percent, null, 'the raw change stays');
  });
});

describe('holidays in the degree-day model (issue 41 item 10)', () => {
  const days = daysBetween('2025-01-01', '2026-01-01');
  const observed = (holidays: Set<string>) =>
    days.map((day) => {
      const dayType = holidays.has(day) ? ('holiday' as const) : isWeekend(day) ? ('weekend' as const) : ('working' as const);
      // A holiday uses 300 kWh less than its weekday would; one day's noise of +7 kWh on the first holiday.
      const holidayKwh = dayType === 'holiday' ? -300 + (day === [...holidays][0] ? 7 : 0) : 0;
      return { day, dayType, hdd: hdd(day), cdd: cdd(day), meanC: temperature(day), actualKwh: model(day) + holidayKwh };
    });

  test('one holiday: no holiday term, the day left out of the fit (a dummy fitted on one day only takes its residual)', () => {
    const fit = fitDayModel(observed(new Set(['2025-05-01'])))!;
    assert.ok(!fit.columns.includes('holiday'), fit.columns.join());
    assert.deepEqual(fit.leftOut, ['2025-05-01']);
    // Without that day the rest is the generator's model exactly; the day is predicted as the working day it falls on.
    assert.ok(Math.abs(fit.coefficients.perHdd - 120) < 1e-6, `${fit.coefficients.perHdd}`);
    assert.ok(fit.statistics.cvRmsePercent < 1e-6 && fit.statistics.n === 364);
    const holiday = observed(new Set(['2025-05-01'])).find((o) => o.day === '2025-05-01')!;
    assert.ok(Math.abs(fit.predict(holiday) - model('2025-05-01')) < 1e-6);
  });

  test('five holidays: the term is fitted, −300 kWh + 7/5 kWh', () => {
    const fit = fitDayModel(observed(new Set(['2025-01-01', '2025-05-01', '2025-07-21', '2025-08-15', '2025-11-11'])))!;
    assert.ok(fit.columns.includes('holiday'));
    assert.ok(Math.abs(fit.coefficients.holiday - (-300 + 7 / 5)) < 0.01, `${fit.coefficients.holiday}`);
  });
});
