// The monthly energy report's PDF on a seeded year: site language, number and date formats and time zone; key figures
// with their change against the previous month and the same month last year; completeness; charts; names in
// Cyrillic, Arabic and Chinese; the same bytes twice; every figure checked against the energy API.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTool } from '../helpers/tools.ts';
import fs from 'node:fs';
import path from 'node:path';
import { addDays } from '../../src/platform/time/calendar.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { eventually, startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';
import Database from 'better-sqlite3';
import { dayIntervals } from '../../src/platform/time/calendar.ts';
import { lastWholeMonth, seededKwh, seedYear, type SeededYear } from '../helpers/seededYear.ts';

const TIMEZONE = 'Europe/Berlin';
const SITE = 'Werk Süd – Πύλη / Завод / 工厂';
const DEMAND_PRICE = 9.5;

/** The site's highest 15-minute mean over a month of the seed, computed from the seed's own formula. */
function handPeakKw(seeded: SeededYear, from: string, to: string, skip: string[]): number {
  let best = 0;
  for (let day = from; day < to; day = addDays(day, 1)) {
    if (skip.includes(day)) continue;
    const { count } = dayIntervals(TIMEZONE, day);
    for (let i = 0; i < count; i += 1) best = Math.max(best, seededKwh(day, i, count, 0, seeded.meterIds.length + 1, seeded.lastMonth.from) * 4);
  }
  return best;
}

describe('monthly report PDF', () => {
  let server: TestServer;
  let admin: TestUser;
  let seeded: SeededYear;
  const outDir = process.env.EMS_REPORT_PNG_DIR ?? tempDir('ems-report-pages-');

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    const config = await server.request('PUT', '/api/configs', {
      token: admin.accessToken,
      body: { siteName: SITE, timezone: TIMEZONE, locale: 'de-DE', currency: 'EUR' },
    });
    assert.equal(config.status, 200, config.text);
    // A day without data in the month before the reported one too: its comparison is marked incomplete.
    const month = lastWholeMonth(TIMEZONE);
    // And 20 estimated intervals (the collector's spread over a gap) on the report month's fourth day.
    seeded = seedYear(server, TIMEZONE, { gaps: [addDays(month.from, -10)], estimated: [{ day: addDays(month.from, 3), intervals: 20 }] });
    // A capacity tariff: 9.50 per kW of the month's peak. The API refuses to change a version in effect (past costs
    // must not move), so the test sets it as an operator's SQL fix would, from another connection.
    const other = new Database(path.join(server.dataDir, 'ems.db'));
    try {
      other.prepare("UPDATE tariff_versions SET demand_charge_per_kw = ? WHERE commodity = 'electricity'").run(DEMAND_PRICE);
    } finally {
      other.close();
    }
  });
  after(() => server.close());

  async function runPlan(body: Record<string, unknown>): Promise<{ pdf: Buffer; csv: string }> {
    const plan = await server.request('POST', '/api/reports/plans', {
      token: admin.accessToken,
      body: { cron: '0 6 1 * *', recipients: ['energy@example.test'], ...body },
    });
    assert.equal(plan.status, 201, plan.text);
    const started = await server.request('POST', `/api/reports/plans/${plan.body.id}/run`, { token: admin.accessToken });
    assert.equal(started.status, 202, started.text);
    const run = await eventually(
      async () => {
        const read = await server.request('GET', `/api/reports/runs/${started.body.id}`, { token: admin.accessToken });
        return read.body.status === 'running' ? undefined : read.body;
      },
      'the report run',
      60_000,
    );
    assert.equal(run.status, 'ok', run.error);
    const file = async (name: string) => {
      const response = await fetch(`${server.url}/api/reports/runs/${run.id}/files/${encodeURIComponent(name)}`, {
        headers: { authorization: `Bearer ${admin.accessToken}` },
      });
      assert.equal(response.status, 200);
      return Buffer.from(await response.arrayBuffer());
    };
    const names = run.files.map((f: { name: string }) => f.name);
    return { pdf: await file(names.find((n: string) => n.endsWith('.pdf'))), csv: (await file(names.find((n: string) => n.endsWith('.csv')))).toString() };
  }

  async function pdfText(pdf: Buffer, name: string): Promise<string> {
    const file = path.join(outDir, `${name}.pdf`);
    fs.writeFileSync(file, pdf);
    return runTool('pdftotext', ['-layout', file, '-']);
  }

  test('figures, comparisons and completeness agree with the energy API, written the German way', async () => {
    const { pdf } = await runPlan({ name: 'Monatsbericht Energie', templateId: 'monthly-energy' });
    const text = await pdfText(pdf, 'monthly-de');
    const { from, to } = seeded.lastMonth;
    const token = admin.accessToken;
    const summary = (await server.request('GET', `/api/energy/summary?from=${from}&to=${to}`, { token })).body;
    // One comparison logic: the cover's changes are /api/analysis/compare's for the site and the same month.
    const compare = await server.request('GET', `/api/analysis/compare?period=month&at=${from}`, { token });
    assert.equal(compare.status, 200, compare.text);
    const { current, previous, lastYear } = compare.body;
    assert.equal(current.kwh, summary.totalKwh, 'the report period is the compared period');
    assert.equal(previous.from, `${addDays(from, -1).slice(0, 7)}-01`);
    assert.equal(previous.complete, false, 'the seeded gap in the previous month');
    assert.equal(lastYear.complete, true);
    assert.deepEqual(current.missingDays, [seeded.gapDay]);
    const format = new SiteFormat({ locale: 'de-DE', timezone: TIMEZONE, currency: 'EUR' });
    // The API's own rounded percentage gives the same text as the change the cover computes.
    assert.equal(format.change(compare.body.change.previous.percent / 100), format.change((current.kwh - previous.kwh) / previous.kwh));
    assert.equal(format.change(compare.body.change.lastYear.percent / 100), format.change((current.kwh - lastYear.kwh) / lastYear.kwh));
    // Intl puts (narrow) no-break spaces between number and unit; pdftotext may give them back as plain spaces.
    const norm = (value: string) => value.replace(/\s+/g, ' ');
    const flat = norm(text);
    // German grouping and decimals: "12.345,6 kWh", "3.086,42 €".
    assert.match(format.kwh(summary.totalKwh), /^\d{1,3}(\.\d{3})*,\d kWh$/);
    for (const expected of [
      'Monatsbericht Energie',
      `Zeitraum: ${format.date(from)} bis ${format.date(addDays(to, -1))}`,
      format.kwh(summary.totalKwh),
      format.money(summary.cost),
      format.carbon(summary.carbonKg),
      `${format.kw(summary.peak.kw)} am ${format.dateTime(summary.peak.at)}`,
      `${format.change((current.kwh - previous.kwh) / previous.kwh)} ggü. Vorperiode (${format.month(previous.from.slice(0, 7))}) · unvollständig (${format.percent(previous.coverage)} der Zählertage)`,
      `${format.change((current.kwh - lastYear.kwh) / lastYear.kwh)} ggü. Vorjahreszeitraum (${format.month(lastYear.from.slice(0, 7))})`,
      `${format.change((current.cost - previous.cost) / previous.cost)} ggü. Vorperiode`,
      `${format.change((current.cost - lastYear.cost) / lastYear.cost)} ggü. Vorjahreszeitraum`,
      `${format.change((current.carbonKg - previous.carbonKg) / previous.carbonKg)} ggü. Vorperiode`,
      `Tage ohne Daten: ${format.date(seeded.gapDay)}`,
    ]) {
      assert.ok(flat.includes(norm(expected)), `PDF has "${expected}":\n${text}`);
    }
    // One day of the month had no data: completeness below 100 %, and that day reads "keine Daten", not 0.
    const days = summary.days.length;
    const share = (days - 1) / days;
    assert.ok(flat.includes(norm(`Datenvollständigkeit: ${format.percent(share)}`)), `completeness ${format.percent(share)}:\n${text}`);
    assert.match(flat, new RegExp(`${format.date(seeded.gapDay).replace(/\./g, '\\.')} keine Daten`));
    for (const day of summary.days.filter((d: { day: string }) => d.day !== seeded.gapDay).slice(0, 5)) {
      assert.ok(flat.includes(norm(`${format.date(day.day)} ${format.number(day.kwh, 1)} ${format.number(day.cost, 2)}`)), `day ${day.day}`);
    }
    for (const area of summary.areas) assert.ok(flat.includes(format.number(area.kwh, 1)), `area ${area.area} ${area.kwh}`);
    // Completeness split by the interval flags, as the completeness API answers it: measured, estimated, missing.
    const completeness = (await server.request('GET', `/api/energy/completeness?from=${from}&to=${to}`, { token })).body.site;
    assert.ok(completeness.estimated > 0 && completeness.missing > 0, JSON.stringify({ ...completeness, days: undefined }));
    const split = `Von den 15-Minuten-Intervallen des Zeitraums: ${format.percent(completeness.measured)} gemessen, ${format.percent(completeness.estimated)} geschätzt, ${format.percent(completeness.missing)} fehlend`;
    assert.ok(flat.includes(norm(split)), `${split}:\n${text}`);
    const estimatedDay = completeness.days.find((d: { day: string }) => d.day === addDays(from, 3));
    assert.ok(Math.abs(estimatedDay.estimated - 20 / 96) < 0.0001);
    const dayRow = summary.days.find((d: { day: string }) => d.day === estimatedDay.day);
    // pdftotext's layout may drop the no-break space of a short right-aligned "0 %": compared without spaces.
    const bare = (value: string) => value.replace(/\s+/g, '');
    assert.ok(
      bare(text).includes(
        bare(
          `${format.date(dayRow.day)} ${format.number(dayRow.kwh, 1)} ${format.number(dayRow.cost, 2)} ${format.number(dayRow.carbonKg, 1)} ${format.percent(estimatedDay.measured)} ${format.percent(estimatedDay.estimated)} ${format.percent(estimatedDay.missing)}`,
        ),
      ),
      `the daily row with its shares:\n${text}`,
    );
    // Area and site names in Cyrillic, Greek and Chinese come out as text (pdftotext reads them back through the embedded fonts).
    for (const name of ['Освещение', '数据中心', 'Πύλη', 'Завод']) assert.ok(text.includes(name), `name ${name} in the PDF:\n${text}`);
    // Every font embedded as a subset (tag "ABCDEF+Name"), none of the 14 standard fonts.
    const fonts = await runTool('pdffonts', [path.join(outDir, 'monthly-de.pdf')]);
    assert.match(fonts, /\+NotoSans-Regular/);
    assert.match(fonts, /\+NotoNaskhArabic/);
    assert.match(fonts, /\+NotoSansHans/);
    assert.doesNotMatch(fonts, /Helvetica/);
    for (const line of fonts.split('\n').slice(2).filter(Boolean)) assert.match(line, /yes\s+yes\s+yes/, `embedded, subset, unicode: ${line}`);
  });

  test("the month's demand charge on the cover and in the tables: billed peak × price, by hand; total cost includes it", async () => {
    const { pdf, csv } = await runPlan({ name: 'Monatsbericht Leistung', templateId: 'monthly-energy' });
    const flat = (await pdfText(pdf, 'monthly-demand')).replace(/\s+/g, ' ');
    const { from, to } = seeded.lastMonth;
    const previousFrom = `${addDays(from, -1).slice(0, 7)}-01`;
    const peak = handPeakKw(seeded, from, to, [seeded.gapDay]);
    const previousPeak = handPeakKw(seeded, previousFrom, from, [addDays(from, -10)]);
    const charge = Math.round(DEMAND_PRICE * peak * 100) / 100;
    const previousCharge = Math.round(DEMAND_PRICE * previousPeak * 100) / 100;
    const summary = (await server.request('GET', `/api/energy/summary?from=${from}&to=${to}`, { token: admin.accessToken })).body;
    const api = (await server.request('GET', `/api/analysis/demand-charges?month=${from.slice(0, 7)}`, { token: admin.accessToken })).body;
    assert.ok(Math.abs(api.demandCharge - charge) < 0.011, `API ${api.demandCharge} vs hand ${charge}`);
    const total = Math.round((summary.cost + charge) * 100) / 100;
    const format = new SiteFormat({ locale: 'de-DE', timezone: TIMEZONE, currency: 'EUR' });
    const norm = (value: string) => value.replace(/\s+/g, ' ');
    for (const expected of [
      `Leistungspreis ${format.money(charge)}`,
      `abgerechnet ${format.kw(peak)} × ${format.money(DEMAND_PRICE)} je kW (Monatsspitze)`,
      `${format.change((charge - previousCharge) / previousCharge)} ggü. Vorperiode`,
      `Gesamtkosten ${format.money(total)}`,
      `Stromkosten ${format.money(summary.cost)}`,
    ]) {
      assert.ok(flat.includes(norm(expected)), `PDF has "${expected}":\n${flat}`);
    }
    // The CSV carries the same figures unformatted, as the demand-charge API answers them.
    const block = csv.split('\r\n\r\n').find((part) => part.startsWith('demand-charge'))!;
    assert.ok(block, csv);
    const [, header, row] = block.split('\r\n');
    assert.equal(header, 'month,basis,peak_kw,billed_kw,demand_charge_per_kw,demand_charge,energy_cost,total_cost');
    const cells = row.split(',');
    assert.equal(cells[0], from.slice(0, 7));
    assert.ok(Math.abs(Number(cells[3]) - peak) < 0.001, `billed ${cells[3]} vs ${peak}`);
    assert.ok(Math.abs(Number(cells[5]) - charge) < 0.011);
    assert.equal(Number(cells[6]), summary.cost);
    assert.ok(Math.abs(Number(cells[7]) - total) < 0.011);
  });

  test('the same plan and period give the same bytes twice; pages render', async () => {
    const first = await runPlan({ name: 'Monthly energy', templateId: 'monthly-energy' });
    const second = await runPlan({ name: 'Monthly energy', templateId: 'monthly-energy' });
    assert.ok(first.pdf.equals(second.pdf), 'byte-identical PDFs');
    const file = path.join(outDir, 'monthly-en.pdf');
    fs.writeFileSync(file, first.pdf);
    await runTool('pdftoppm', ['-png', '-r', '60', file, path.join(outDir, 'monthly')]);
    const pages = fs.readdirSync(outDir).filter((name) => name.startsWith('monthly-') && name.endsWith('.png'));
    assert.ok(pages.length >= 3, `pages: ${pages.join(', ')}`);
    for (const page of pages) assert.ok(fs.statSync(path.join(outDir, page)).size > 5_000, `${page} has content`);
  });

  test('Arabic text is laid out right to left in logical order', async () => {
    const { visualRuns } = await import('../../src/reporting/reports/pdfText.ts');
    // "مبنى الإدارة 2": the Arabic words run right to left, the digit stays at the logical end (left on the page).
    const runs = visualRuns('مبنى الإدارة 2');
    assert.equal(runs[0].text, '2', 'the number at the left');
    assert.deepEqual(runs.at(-1), { text: 'مبنى الإدارة', family: 'arabic' }, 'the words in logical order, for the shaper to lay out right to left');
    assert.equal(runs.map((r) => r.text).join('').length, 'مبنى الإدارة 2'.length, 'nothing lost');
    // Latin with an Arabic name and a number inside: the number belongs to the Arabic phrase (rule W2), so the page
    // reads "Area 7 ⟵مبنى total".
    const mixed = visualRuns('Area مبنى 7 total');
    assert.equal(mixed[0].text, 'Area 7');
    assert.equal(mixed.at(-1)!.text, 'total');
    assert.ok(mixed.some((r) => r.family === 'arabic' && r.text.startsWith('مبنى')));
  });
});
