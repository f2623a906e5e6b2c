// The report's headline over every utility (issue 41 item 7): cost and carbon of electricity import, gas, heat and water,
// carbon split into scope 1 (gas burnt on site) and scope 2 (purchased electricity and heat), on the content and on the
// PDF cover, whose grid-only lines now say "electricity". Known answers by hand: every 15 minutes of the last whole
// month (UTC) 1 kWh of grid import, 0.1 m³ of gas at 10 kWh/m³, 0.5 kWh of heat and 0.01 m³ of water, at back-dated
// tariffs of known price and carbon factor.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTool } from '../helpers/tools.ts';
import path from 'node:path';
import { addDays, dayIntervals, daysBetween, siteDay } from '../../src/platform/time/calendar.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import type { DayRecord } from '../../src/metering/store.ts';
import { pdfText, runReportNow } from '../helpers/reportRun.ts';
import { startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';
import { lastWholeMonth } from '../helpers/seededYear.ts';

const TIMEZONE = 'UTC';

describe('report headline over all utilities, carbon by scope', () => {
  let server: TestServer;
  let admin: TestUser;
  const month = lastWholeMonth(TIMEZONE);
  const days = daysBetween(month.from, month.to).length;
  const today = siteDay(TIMEZONE, new Date());
  const outDir = process.env.EMS_REPORT_PNG_DIR ?? tempDir('ems-report-all-utilities-');

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    const token = admin.accessToken;
    const config = await server.request('PUT', '/api/configs', {
      token,
      body: { siteName: 'Campus Süd', timezone: TIMEZONE, locale: 'en-GB', currency: 'EUR' },
    });
    assert.equal(config.status, 200, config.text);
    const validFrom = addDays(month.from, -3);
    for (const [route, body] of [
      ['/api/energy/tariffs', { validFrom, price: 0.2, carbonFactor: 0.25, standingChargePerDay: 1, demandChargePerKw: 5 }],
      ['/api/energy/tariffs', { validFrom, commodity: 'gas', price: 0.09, carbonFactor: 0.202, standingChargePerDay: 0.5 }],
      ['/api/energy/tariffs', { validFrom, commodity: 'heat', price: 0.08, carbonFactor: 0.1 }],
      ['/api/energy/tariffs', { validFrom, commodity: 'water', price: 4.2, carbonFactor: 0.3 }],
      ['/api/energy/calorific-values', { validFrom, kwhPerM3: 10, correctionFactor: 1 }],
    ] as const) {
      const created = await server.request('POST', route, { token, body });
      assert.equal(created.status, 201, created.text);
    }
    const { energy, db } = server.service.deps;
    const meter = (body: Record<string, unknown>) => energy.meters.create({ kind: 'energy', ...body } as never, null).id;
    const per = [
      { id: meter({ name: 'Grid import', code: 'meter.main.kwh', site: true }), value: 1 },
      { id: meter({ name: 'Gas', code: 'meter.gas.m3', commodity: 'gas' }), value: 0.1 },
      { id: meter({ name: 'District heat', code: 'meter.heat.kwh', commodity: 'heat' }), value: 0.5 },
      { id: meter({ name: 'Water', code: 'meter.water.m3', commodity: 'water' }), value: 0.01 },
    ];
    // Through today (whole days): the overview's and the wallboard's month so far has data even on the 1st.
    for (let day = addDays(month.from, -2); day <= today; day = addDays(day, 1)) {
      const { start, count } = dayIntervals(TIMEZONE, day);
      const rows: DayRecord[] = per.map(({ id, value }) => ({
        meterId: id,
        day,
        start,
        kwh: new Float32Array(count).fill(value),
        flags: new Uint8Array(count),
        maxKw: null,
        stored: null,
      }));
      db.sqlite.transaction(() => energy.store.save(rows))();
    }
  });
  after(() => server?.close());

  test('cost = electricity import + gas + heat + water; scope 1 = gas, scope 2 = electricity + heat; water outside both; on the PDF cover', async () => {
    // By hand (96 intervals a day in UTC). Float32 holds 0.1 and 0.01 to ~1e-9 relative: tolerances of a cent / a gram.
    const elecKwh = 96 * days;
    const gasKwh = 96 * 0.1 * 10 * days;
    const heatKwh = 96 * 0.5 * days;
    const waterM3 = 96 * 0.01 * days;
    const cost = elecKwh * 0.2 + days * 1 + gasKwh * 0.09 + days * 0.5 + heatKwh * 0.08 + waterM3 * 4.2;
    const scope1 = gasKwh * 0.202;
    const scope2 = elecKwh * 0.25 + heatKwh * 0.1;

    const { ReportContentBuilder } = await import('../../src/reporting/reports/content.ts');
    const { siteEnergyFigures } = await import('../helpers/reportEnergy.ts');
    const { deps } = server.service;
    const builder = new ReportContentBuilder(deps.db, siteEnergyFigures(deps.db, deps.energy.figures), deps.analysis, () => true, deps.energy.commodities);
    const content = builder.build('monthly-energy', 'All utilities', Date.parse(`${month.to}T12:00:00Z`));
    const all = content.allUtilities!;
    assert.ok(all, 'the content carries the all-utilities headline');
    const near = (actual: number | null, expected: number, tolerance: number, what: string) =>
      assert.ok(actual !== null && Math.abs(actual - expected) < tolerance, `${what}: ${actual} vs ${expected} by hand`);
    near(all.costTotal, cost, 0.02, 'cost over all utilities');
    near(all.scope1Kg, scope1, 0.01, 'scope 1 (gas)');
    near(all.scope2Kg, scope2, 0.01, 'scope 2 (electricity + heat)');
    near(all.carbonKg, scope1 + scope2, 0.01, 'carbon = scope 1 + scope 2 (water is scope 3, outside)');
    near(all.energyKwh, elecKwh + gasKwh + heatKwh, 0.01, 'all fuels in kWh, never water');
    assert.deepEqual(all.unpriced, []);
    // The grid-only headline is unchanged beside it: electricity's carbon is under half the site's here.
    near(content.energy!.carbonKg, elecKwh * 0.25, 0.01, 'the grid-import carbon stays what it was');
    assert.ok(all.carbonKg! > content.energy!.carbonKg * 2);

    const { file } = await runReportNow(server, admin.accessToken, {
      name: 'All',
      templateId: 'monthly-energy',
      cron: '0 6 1 * *',
      recipients: ['energy@example.test'],
    });
    const pdfFile = path.join(outDir, 'all-utilities.pdf');
    const pdf = await file('.pdf');
    await pdfText(pdf, pdfFile);
    const cover = (await runTool('pdftotext', ['-layout', '-f', '1', '-l', '1', pdfFile, '-'])).replace(/\s+/g, ' ');
    const format = new SiteFormat({ locale: 'en-GB', timezone: TIMEZONE, currency: 'EUR' });
    for (const expected of [
      `Grid import (electricity) ${format.kwh(elecKwh)}`,
      `Electricity cost ${format.money(elecKwh * 0.2 + days)}`,
      `Electricity carbon ${format.carbon(elecKwh * 0.25)}`,
      `All utilities ${format.money(cost)}`,
      format.carbon(scope1 + scope2),
      `scope 1 (gas) ${format.number(scope1, 1)} kg`,
      `scope 2 (electricity, heat) ${format.number(scope2, 1)} kg`,
      `all fuels ${format.kwh(elecKwh + gasKwh + heatKwh)}`,
      // With the demand charge and total cost (seven figures) the cover still holds on one page: its last lines are there.
      `Demand charge ${format.money(4 * 5)}`,
      'Peak demand',
      'Data completeness',
    ]) {
      assert.ok(cover.includes(expected), `cover has "${expected}":\n${cover}`);
    }
    await runTool('pdftoppm', ['-png', '-r', '70', '-f', '1', '-l', '1', pdfFile, path.join(outDir, 'all-utilities')]);
  });

  test('a utility with data but no tariff is named as left out, never counted as 0', async () => {
    const { allUtilities } = await import('../../src/energy/allUtilities.ts');
    const view = server.service.deps.energy.commodities.period(month.from, month.to);
    const withoutHeatTariff = {
      ...view,
      commodities: view.commodities.map((c) => (c.commodity === 'heat' ? { ...c, cost: null, carbonKg: null } : c)),
    };
    const all = allUtilities(withoutHeatTariff);
    assert.deepEqual(all.unpriced, ['heat']);
    const full = allUtilities(view);
    const heat = view.commodities.find((c) => c.commodity === 'heat')!;
    assert.ok(Math.abs(all.costTotal! - (full.costTotal! - heat.cost!)) < 0.011);
    assert.ok(Math.abs(all.scope2Kg! - (full.scope2Kg! - heat.carbonKg!)) < 0.002);
  });

  test('the overview and the wallboard carry the same headline for the month so far, by hand', async () => {
    // Whole days from the 1st through today, each as above.
    const n = daysBetween(`${today.slice(0, 7)}-01`, addDays(today, 1)).length;
    const cost = n * (96 * 0.2 + 1 + 96 * 0.09 + 0.5 + 48 * 0.08 + 0.96 * 4.2);
    const scope1 = n * 96 * 0.202;
    const scope2 = n * (96 * 0.25 + 48 * 0.1);
    const stats = await server.request('GET', '/api/overview/stats', { token: admin.accessToken });
    assert.equal(stats.status, 200, stats.text);
    const board = await server.request('GET', '/api/wallboard');
    assert.equal(board.status, 200, board.text);
    for (const [where, all] of [
      ['overview allUtilitiesMonth', stats.body.allUtilitiesMonth],
      ['wallboard utilities.month.allUtilities', board.body.utilities?.month.allUtilities],
    ]) {
      assert.ok(all, `${where} is there`);
      assert.ok(Math.abs(all.costTotal - cost) < 0.02, `${where} cost ${all.costTotal} vs ${cost}`);
      assert.ok(Math.abs(all.scope1Kg - scope1) < 0.01, `${where} scope 1 ${all.scope1Kg} vs ${scope1}`);
      assert.ok(Math.abs(all.scope2Kg - scope2) < 0.01, `${where} scope 2 ${all.scope2Kg} vs ${scope2}`);
      assert.ok(Math.abs(all.energyKwh - n * 240) < 0.01, `${where} all fuels ${all.energyKwh}`);
    }
    // The grid-only fields keep their meaning beside it.
    assert.ok(Math.abs(stats.body.carbonMonthKg - n * 96 * 0.25) < 0.01, `carbonMonthKg ${stats.body.carbonMonthKg}`);
  });
});
